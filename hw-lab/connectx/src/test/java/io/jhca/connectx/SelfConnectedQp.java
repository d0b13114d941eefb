package io.jhca.connectx;

import java.net.InetAddress;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.Mlx5Provider;
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

/**
 * What the mlx5 verbs benchmark stands on, for tests: an in-process model device, a 64 KiB region registered for
 * local and remote write, a single-threaded CQ of 256 CQEs and a single-threaded RC QP in RTS connected to itself.
 */
final class SelfConnectedQp implements AutoCloseable {
    final ModelFunction fn;
    final Mlx5Context ctx;
    final DmaRegion mem;
    final ProtectionDomain pd;
    final MemoryRegion mr;
    final CompletionQueue cq;
    final QueuePair qp;
    /** The path to itself, for a QP taken back through RESET to RTS. */
    final AhAttributes path;

    /** Its CQ's completion channel, or null. */
    final io.jhca.verbs.CompletionChannel channel;

    SelfConnectedQp(String name, String address, int maxSendWr) throws Exception {
        this(name, address, maxSendWr, false);
    }

    /** @param withChannel whether the CQ gets a completion channel ({@link #channel}) */
    SelfConnectedQp(String name, String address, int maxSendWr, boolean withChannel) throws Exception {
        fn = ModelFunction.open(name, InetAddress.getByName(address));
        ctx = Mlx5Provider.open(new DeviceInfo(name, "mlx5", 0, "InfiniBand"), fn, Mlx5Options.defaults());
        mem = DmaMemory.allocate(1 << 16);
        pd = ctx.allocatePd();
        mr = pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
        channel = withChannel ? ctx.createCompletionChannel() : null;
        cq = withChannel ? ctx.createCq(255, channel, CqFlags.SINGLE_THREADED) : ctx.createCq(255, CqFlags.SINGLE_THREADED);
        qp = pd.createQp(QpInitAttributes.rc(cq, cq).singleThreaded().maxSendWr(maxSendWr));
        int gidIndex = -1;
        for (int i = 0; i < ctx.queryPort(1).gidTblLen() && gidIndex < 0; i++) {
            if (ctx.queryGid(1, i).isIpv4Mapped()) {
                gidIndex = i;
            }
        }
        Gid gid = ctx.queryGid(1, gidIndex);
        path = AhAttributes.to(gid).sgidIndex(gidIndex);
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE, Access.REMOTE_READ));
        qp.modify(QpAttributes.toRtr(qp.qpn(), 0, path, Mtu.MTU_1024));
        qp.modify(QpAttributes.toRts(0));
    }

    @Override
    public void close() {
        fn.model().pauseDataPath(false);
        qp.close();
        cq.close();
        if (channel != null) {
            channel.close();
        }
        mr.close();
        pd.close();
        ctx.close();
        mem.close();
    }
}
