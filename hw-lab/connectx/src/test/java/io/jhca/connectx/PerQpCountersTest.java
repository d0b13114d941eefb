package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.Map;

import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.Mlx5Provider;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * The mlx5 driver over the model with a Q counter set per QP (Mlx5Options.perQpCounters): each QP's statistics() are
 * its own events, exactly, and the device's statistics() add up every QP's, a destroyed QP's included.
 */
class PerQpCountersTest {

    private static final String SIM_IP = "127.0.0.37";
    private static final String RXE_IP = "127.0.0.38";

    @Test
    void eachQpCountsItsOwnAndTheDeviceAll() throws Exception {
        Mlx5Options options = Mlx5Options.defaults().withInitTimeouts(10_000, 10_000).withCommandTimeout(10_000)
                .withPerQpCounters(true);
        try (RxePeer peer = new RxePeer("perqp-peer", RXE_IP);
             Mlx5Context ctx = Mlx5Provider.open(new DeviceInfo("perqp0", "mlx5", 0, "InfiniBand"),
                     ModelFunction.open("perqp0", InetAddress.getByName(SIM_IP)), options);
             ProtectionDomain pd = ctx.allocatePd();
             CompletionQueue cq = ctx.createCq(64);
             DmaRegion mem = DmaMemory.allocate(1 << 16);
             MemoryRegion mr = pd.register(mem, 0, mem.length(), RxePeer.ALL_ACCESS)) {
            QueuePair first = pd.createQp(QpInitAttributes.rc(cq, cq));
            QueuePair second = pd.createQp(QpInitAttributes.rc(cq, cq));
            QueuePair[] remote = {connect(ctx, first, peer), connect(ctx, second, peer)};
            int[] writes = {3, 5};
            for (int q = 0; q < 2; q++) {
                for (int k = 0; k < writes[q]; k++) {
                    assertEquals(1, remote[q].postSend(new SendWr().wrId(k).opcode(WrOpcode.RDMA_WRITE)
                            .sendFlags(SendFlags.SIGNALED).rdma(mr.address() + 64L * k, mr.rkey())
                            .sge(peer.mr, 0, 64)));
                    assertEquals(WcStatus.SUCCESS, RxePeer.await(remoteCq).status());
                }
            }
            assertEquals(3L, first.statistics().get("rx_write_requests"), first.statistics().toString());
            assertEquals(5L, second.statistics().get("rx_write_requests"));
            assertEquals(8L, ctx.statistics().get("rx_write_requests"), "the device counts every QP");
            first.close();
            assertEquals(8L, ctx.statistics().get("rx_write_requests"), "a destroyed QP's counts stay the device's");
            assertEquals(5L, second.statistics().get("rx_write_requests"));
            second.close();
            assertEquals(8L, ctx.statistics().get("rx_write_requests"));
            try (QueuePair fresh = pd.createQp(QpInitAttributes.rc(cq, cq))) {
                assertTrue(fresh.statistics().isEmpty(), "no set of its own before RST2INIT");
            }
        }
    }

    private CompletionQueue remoteCq;

    /** RC from {@code qp} to a new QP at the peer (granting remote write), both at RTS; returns the peer's QP. */
    private QueuePair connect(Mlx5Context ctx, QueuePair qp, RxePeer peer) throws Exception {
        if (remoteCq == null) {
            remoteCq = peer.own(peer.ctx.createCq(256));
        }
        QueuePair r = peer.own(peer.pd.createQp(QpInitAttributes.rc(remoteCq, remoteCq).maxSendWr(16).maxRecvWr(16)));
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        r.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        qp.modify(QpAttributes.toRtr(r.qpn(), 0, AhAttributes.to(peer.ctx.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_1024));
        qp.modify(QpAttributes.toRts(0));
        r.modify(QpAttributes.toRtr(qp.qpn(), 0, AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_1024));
        r.modify(QpAttributes.toRts(0));
        return r;
    }
}
