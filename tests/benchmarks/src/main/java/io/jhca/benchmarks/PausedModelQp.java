package io.jhca.benchmarks;

import io.jhca.connectx.ConnectXModel;
import io.jhca.connectx.ModelFunction;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.CqFlags;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqInitAttributes;
import io.jhca.verbs.Verbs;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.function.UnaryOperator;

/**
 * What the mlx5 verbs-level benchmarks stand on: an RC QP of the mlx5 provider on the ConnectX model ("mlx5_0"),
 * connected to itself, single-threaded, with one single-threaded CQ for both sides and a 64 KiB MR, and the model's
 * data path paused, so the device never takes a WQE and the benchmark writes the CQEs into {@link #cqRing} itself.
 */
final class PausedModelQp implements AutoCloseable {
    final Context ctx;
    final ConnectXModel model;
    final ProtectionDomain pd;
    final DmaRegion mem;
    final MemoryRegion mr;
    final CompletionQueue cq;
    /** The SRQ the QP takes its receives from, or null. */
    final SharedReceiveQueue srq;
    final QueuePair qp;
    /** The CQ's ring as the driver reads it, and its entries. */
    final UnsafeBuffer cqRing;
    final int cqEntries;

    /** @param qpAttributes sizes for the QP, applied to RC attributes on {@link #cq} that are single-threaded */
    PausedModelQp(int cqDepth, UnaryOperator<QpInitAttributes> qpAttributes) {
        this(cqDepth, 0, qpAttributes);
    }

    /** @param srqWr the max_wr of an SRQ for the QP's receives, 0 for none */
    PausedModelQp(int cqDepth, int srqWr, UnaryOperator<QpInitAttributes> qpAttributes) {
        ctx = Verbs.open("mlx5_0");
        model = ((ModelFunction) ((Mlx5Context) ctx).function()).model();
        pd = ctx.allocatePd();
        mem = DmaMemory.allocate(1 << 16);
        mr = pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        cq = ctx.createCq(cqDepth, CqFlags.SINGLE_THREADED);
        srq = srqWr > 0 ? pd.createSrq(SrqInitAttributes.create().maxWr(srqWr)) : null;
        QpInitAttributes attributes = QpInitAttributes.rc(cq, cq).singleThreaded();
        qp = pd.createQp(qpAttributes.apply(srq != null ? attributes.srq(srq) : attributes));
        Gid gid = null;
        int gidIndex = 0;
        for (int i = 0; i < ctx.queryPort(1).gidTblLen() && gid == null; i++) {
            if (ctx.queryGid(1, i).isIpv4Mapped()) {
                gid = ctx.queryGid(1, i);
                gidIndex = i;
            }
        }
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        qp.modify(QpAttributes.toRtr(qp.qpn(), 0, AhAttributes.to(gid).sgidIndex(gidIndex), Mtu.MTU_1024));
        qp.modify(QpAttributes.toRts(0));
        model.pauseDataPath(true);
        cqRing = model.cqRing(cq.cqn());
        cqEntries = cqRing.capacity() / Cqe64.SIZE;
    }

    @Override
    public void close() {
        model.pauseDataPath(false);
        qp.close();
        if (srq != null) {
            srq.close();
        }
        cq.close();
        mr.close();
        mem.close();
        pd.close();
        ctx.close();
    }
}
