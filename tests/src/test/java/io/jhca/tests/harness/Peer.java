package io.jhca.tests.harness;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WrOpcode;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * One end of a test connection: a PD, a DMA buffer registered as one MR, its CQs and one QP, plus the PSN and
 * GID it advertises to its peer. Created by {@link Harness#peer}; the harness closes it.
 */
public final class Peer {
    /** The UD Q_Key the suite uses (perftest's DEFF_QKEY). */
    public static final int QKEY = 0x11111111;

    private final Harness harness;
    private final Context ctx;
    private final ProtectionDomain pd;
    private final DmaRegion mem;
    private final MemoryRegion mr;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final QueuePair qp;
    private final int psn;
    private final int gidIndex;
    private final Gid gid;

    Peer(Harness harness, Context ctx, ProtectionDomain pd, DmaRegion mem, MemoryRegion mr, CompletionQueue sendCq,
         CompletionQueue recvCq, QueuePair qp, int psn, int gidIndex, Gid gid) {
        this.harness = harness;
        this.ctx = ctx;
        this.pd = pd;
        this.mem = mem;
        this.mr = mr;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.qp = qp;
        this.psn = psn;
        this.gidIndex = gidIndex;
        this.gid = gid;
    }

    public Context ctx() {
        return ctx;
    }

    public ProtectionDomain pd() {
        return pd;
    }

    public DmaRegion mem() {
        return mem;
    }

    public MemoryRegion mr() {
        return mr;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue recvCq() {
        return recvCq;
    }

    public QueuePair qp() {
        return qp;
    }

    public int qpn() {
        return qp.qpn();
    }

    /** The send PSN this peer starts with (the remote's rq_psn). */
    public int psn() {
        return psn;
    }

    public int gidIndex() {
        return gidIndex;
    }

    public Gid gid() {
        return gid;
    }

    /** The whole buffer (at most 2 GiB - 1 bytes). */
    public UnsafeBuffer buf() {
        return mem.buffer();
    }

    /** The virtual address of byte {@code off} of the MR: what a remote puts in RETH.VA. */
    public long addr(long off) {
        return mr.address() + off;
    }

    /** The address vector that reaches {@code remote} from this peer (RoCEv2: GRH mandatory). */
    public AhAttributes avTo(Peer remote) {
        return AhAttributes.to(remote.gid).sgidIndex(gidIndex).hopLimit(64);
    }

    public void toInit(int qpAccess) {
        qp.modify(QpAttributes.toInit(1).accessFlags(qpAccess));
        assertEquals(QpState.INIT, qp.state(), "state after RESET->INIT");
    }

    public void toRtr(Peer remote, Mtu mtu, RcParams p) {
        int maxDest = Math.min(p.maxRdAtomic, ctx.queryDevice().maxQpRdAtom());
        qp.modify(QpAttributes.toRtr(remote.qpn(), remote.psn(), avTo(remote), mtu)
                .maxDestRdAtomic(maxDest).minRnrTimer(p.minRnrTimer));
        assertEquals(QpState.RTR, qp.state(), "state after INIT->RTR");
    }

    public void toRts(RcParams p) {
        int maxRd = Math.min(p.maxRdAtomic, ctx.queryDevice().maxQpInitRdAtom());
        qp.modify(QpAttributes.toRts(psn).timeout(p.timeout).retryCnt(p.retryCnt).rnrRetry(p.rnrRetry)
                .maxRdAtomic(maxRd));
        assertEquals(QpState.RTS, qp.state(), "state after RTR->RTS");
    }

    /** RESET -> INIT -> RTR -> RTS for a UD QP. */
    public void readyUd() {
        qp.modify(QpAttributes.toInitUd(1, QKEY));
        qp.modify(QpAttributes.toRtrUd());
        qp.modify(QpAttributes.toRtsUd(psn));
        assertEquals(QpState.RTS, qp.state(), "UD QP state after RESET->INIT->RTR->RTS");
    }

    /** Posts one receive of {@code [off, off + len)} of this peer's MR. */
    public void postRecv(long wrId, long off, int len) {
        RecvWr wr = new RecvWr(1).wrId(wrId).sge(mr, off, len);
        assertEquals(1, qp.postRecv(wr), "receive WR " + wrId + " posted");
    }

    /** Posts one send WR (or a chain) and asserts every WR of it was taken. */
    public void post(SendWr wr) {
        int n = 0;
        for (SendWr w = wr; w != null; w = w.next()) {
            n++;
        }
        assertEquals(n, qp.postSend(wr), "send WRs posted");
    }

    /** A signaled WR with one SGE over {@code [off, off + len)} of this peer's MR. */
    public SendWr wr(long wrId, WrOpcode op, long off, int len) {
        return new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED).sge(mr, off, len);
    }

    /** A signaled RDMA WRITE/READ between {@code [off, off+len)} here and {@code remoteOff} in the remote's MR. */
    public SendWr rdma(long wrId, WrOpcode op, long off, int len, Peer remote, long remoteOff) {
        return wr(wrId, op, off, len).rdma(remote.addr(remoteOff), remote.mr().rkey());
    }

    Harness harness() {
        return harness;
    }

    @Override
    public String toString() {
        return ctx.name() + " " + qp.describe();
    }
}
