package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.Mlx5Provider;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.CqFlags;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WorkCompletion;

/**
 * The hooks the mlx5 verbs benchmark stands on: with the data path paused a posted WQE is neither executed nor
 * completed, and resumes when it is resumed; cqRing is the CQ's ring as the driver sees it.
 */
class BenchmarkHooksTest {

    @Test
    void pausedDataPathDefersWorkAndCqRingIsTheDriversRing() throws Exception {
        ModelFunction fn = ModelFunction.open("bench0", InetAddress.getByName("127.0.0.44"));
        try (Mlx5Context ctx = Mlx5Provider.open(new DeviceInfo("bench0", "mlx5", 0, "InfiniBand"), fn,
                Mlx5Options.defaults());
             DmaRegion mem = DmaMemory.allocate(1 << 16)) {
            ProtectionDomain pd = ctx.allocatePd();
            MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            CompletionQueue cq = ctx.createCq(255, CqFlags.SINGLE_THREADED);
            QueuePair qp = pd.createQp(QpInitAttributes.rc(cq, cq).singleThreaded().maxSendWr(16));
            int gidIndex = -1;
            for (int i = 0; i < ctx.queryPort(1).gidTblLen() && gidIndex < 0; i++) {
                if (ctx.queryGid(1, i).isIpv4Mapped()) {
                    gidIndex = i;
                }
            }
            Gid gid = ctx.queryGid(1, gidIndex);
            qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
            qp.modify(QpAttributes.toRtr(qp.qpn(), 0, AhAttributes.to(gid).sgidIndex(gidIndex), Mtu.MTU_1024));
            qp.modify(QpAttributes.toRts(0));

            UnsafeBuffer ring = fn.model().cqRing(cq.cqn());
            assertEquals(256 * Cqe64.SIZE, ring.capacity(), "ncqe 64-byte CQEs");
            assertEquals(0xf0, ring.getByte(Cqe64.OP_OWN_OFFSET) & 0xff, "first CQE not written yet (INVALID, owner 0)");
            assertThrows(IllegalArgumentException.class, () -> fn.model().cqRing(cq.cqn() + 1000));

            mem.buffer().putLong(0, 0x1122334455667788L);
            fn.model().pauseDataPath(true);
            qp.sendQueue().start().wrId(7).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.address() + 4096)
                    .sge(mr, 0, 8);
            assertEquals(0, qp.sendQueue().complete());
            WorkCompletion wc = new WorkCompletion();
            long until = System.nanoTime() + 300_000_000L;
            while (System.nanoTime() < until) {
                assertEquals(0, cq.poll(wc), "no completion while the data path is paused");
                Thread.sleep(10);
            }
            assertEquals(0L, mem.buffer().getLong(4096), "nothing written while paused");

            fn.model().pauseDataPath(false);
            until = System.nanoTime() + 20_000_000_000L;
            int n = 0;
            while (n == 0 && System.nanoTime() < until) {
                n = cq.poll(wc);
            }
            assertEquals(1, n, "the WQE completes once the data path runs again");
            assertTrue(wc.isSuccess(), wc.toString());
            assertEquals(7, wc.wrId());
            assertEquals(0x1122334455667788L, mem.buffer().getLong(4096));
            assertEquals(0xf0 >>> 4, (ring.getByte(64 + Cqe64.OP_OWN_OFFSET) & 0xff) >>> 4, "the next CQE still unwritten");
            qp.close();
            cq.close();
            mr.close();
            pd.close();
        }
    }
}
