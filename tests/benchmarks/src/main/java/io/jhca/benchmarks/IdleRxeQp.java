package io.jhca.benchmarks;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.CqFlags;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.WorkCompletion;

/**
 * The lock benchmarks' set-up: an RC QP of an rxe device in CALLER mode that is never progressed, connected to
 * itself, with one CQ for both sides and a 64 KiB MR; shared (locking) or single-threaded. Nothing is ever sent, so
 * only the verbs layer's work is timed. The two operations they time are here too, so both benchmarks time the same.
 */
final class IdleRxeQp implements AutoCloseable {
    final Context ctx;
    final ProtectionDomain pd;
    final DmaRegion mem;
    final MemoryRegion mr;
    final CompletionQueue cq;
    final QueuePair qp;
    final SendQueue sq;

    IdleRxeQp(String device, String address, boolean singleThreaded) {
        ctx = RxeProvider.open(RxeDeviceConfig.builder(device).address(address).progressMode(ProgressMode.CALLER).build());
        pd = ctx.allocatePd();
        mem = DmaMemory.allocate(1 << 16);
        mr = pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        cq = ctx.createCq(64, singleThreaded ? CqFlags.SINGLE_THREADED : 0);
        QpInitAttributes init = QpInitAttributes.rc(cq, cq).maxSendWr(16);
        qp = pd.createQp(singleThreaded ? init.singleThreaded() : init);
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        qp.modify(QpAttributes.toRtr(qp.qpn(), 0, AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_4096));
        qp.modify(QpAttributes.toRts(0));
        sq = qp.sendQueue();
    }

    /**
     * A builder batch: start, one signaled RDMA WRITE with an SGE, abort (the ring is left as it was, so the operation
     * repeats forever without a device). Returns {@code wrId}.
     */
    long batch(long wrId) {
        sq.start();
        sq.wrId(wrId).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.address()).sge(mr, 0, 64);
        sq.abort();
        return wrId;
    }

    /** One poll of the CQ, which is always empty, into {@code wc}. */
    int pollEmpty(WorkCompletion wc) {
        return cq.poll(wc);
    }

    @Override
    public void close() {
        qp.close();
        cq.close();
        mr.close();
        mem.close();
        pd.close();
        ctx.close();
    }
}
