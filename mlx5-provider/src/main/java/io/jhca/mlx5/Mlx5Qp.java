package io.jhca.mlx5;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.McgLayouts;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.QpModifyLayouts;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.init.PrmCommand;
import io.jhca.mlx5.init.HcaCaps;
import io.jhca.mlx5.ring.Bfreg;
import io.jhca.mlx5.ring.CqeOwner;
import io.jhca.mlx5.ring.DbrPool;
import io.jhca.mlx5.ring.DirectSq;
import io.jhca.mlx5.ring.ReceiveRing;
import io.jhca.mlx5.ring.RqBuffer;
import io.jhca.mlx5.ring.SqBuffer;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.QpAttrMask;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.Sge;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * An RC, UC or UD queue pair. Its buffer holds the receive ring at offset 0 and the send ring after it, as rdma-core
 * lays it out ({@link QpGeometry}); its doorbell record holds the RQ counter in word 0 and the SQ counter in word 1.
 * CREATE_QP gives the device the buffer (PAS, 4 KiB pages), the record, the rings' sizes, the CQs, the PD and the
 * UAR; transitions are the commands of {@link QpModify}. WQEs are written in place by {@link SqBuffer} and
 * {@link RqBuffer}, through the builder ({@link #sendQueue()}) or the classic postSend/postRecv, which share the same
 * writer.
 *
 * <p>SQD: mlx5 has no command that takes a QP from RTS to SQD (mlx5_ifc.h has SQD_RTS_QP only, and mlx5_ib refuses
 * the transition). The provider keeps the device's QP in RTS and drains in software: from RTS to SQD it holds the
 * send doorbell, so WRs posted in SQD are written but not given to the device; back to RTS it releases them with one
 * doorbell (plus RTS2RTS if attributes come with the transition). WQEs published before SQD still complete, and no
 * SQ_DRAINED event is raised.
 */
final class Mlx5Qp extends io.jhca.verbs.QueuePair implements CqeOwner {

    static {
        CompiledApart.request();   // before any caller of the chain loop is compiled
    }

    private final Mlx5Context ctx;
    /** A Q counter set of its own, allocated at the first RST2INIT when the options ask for one; -1: none. */
    private volatile int ownCounterSet = -1;
    private final Mlx5Pd pd;
    private final Mlx5Cq sendCq;
    private final Mlx5Cq recvCq;
    private final DmaRegion memory;
    private final DbrPool.Slot dbr;
    /** A bfreg of its own for a single-threaded QP while the UAR page has one free (no lock), else the shared one. */
    private final Bfreg bfreg;
    private final SqBuffer sq;
    private final RqBuffer rq;
    /** The SRQ's ring when the QP takes its receives from one, else null. */
    private final io.jhca.mlx5.ring.SrqBuffer srqRing;
    private final Mlx5SendQueue builder;
    /**
     * The send queue as {@link Mlx5Direct} drives it, or null while the verbs post. Plain: taken by the thread that
     * posts (the contract of {@link Mlx5Direct#sendQueue}), and read once per chain or builder batch.
     */
    private DirectSq directSq;
    private final UnsafeBuffer inlineView = new UnsafeBuffer(0, 0);

    private Mlx5Qp(Mlx5Pd pd, QpInitAttributes init, QpGeometry g, int qpn, DmaRegion memory, DbrPool.Slot dbr) {
        super(pd, init, g.granted());
        this.ctx = pd.mlx5Context();
        this.pd = pd;
        this.sendCq = (Mlx5Cq) init.sendCq();
        this.recvCq = (Mlx5Cq) init.recvCq();
        this.memory = memory;
        this.dbr = dbr;
        qpn(qpn);
        UnsafeBuffer buf = memory.buffer(0, g.bufferBytes());
        this.bfreg = g.sqWqeCnt() > 0 && init.isSingleThreaded() ? ctx.bfregs().acquire() : ctx.bfreg();
        this.rq = g.rqWqeCnt() > 0 ? new RqBuffer(buf, 0, g.rqWqeCnt(), g.rqWqeShift(), dbr.record()) : null;
        this.sq = g.sqWqeCnt() > 0 ? new SqBuffer(buf, g.rqBytes(), g.sqWqeCnt(), g.sqMaxPost(), qpn,
                init.sqSigAll(), dbr.record(), bfreg, ctx.blueFlameMode()) : null;
        this.builder = new Mlx5SendQueue(this, sq);
        this.srqRing = init.srq() != null ? ((Mlx5Srq) init.srq()).ring() : null;
    }

    static Mlx5Qp create(Mlx5Pd pd, QpInitAttributes init, QpCapabilities requested) {
        Mlx5Context ctx = pd.mlx5Context();
        if (!(init.sendCq() instanceof Mlx5Cq) || !(init.recvCq() instanceof Mlx5Cq)) {
            throw new VerbsException(VerbsException.EINVAL, "create QP: CQs of another provider");
        }
        HcaCaps caps = ctx.hca().caps();
        QpGeometry g = QpGeometry.of(init.type(), requested, ctx.queryDevice().maxSge(), caps.logMaxQpSz());
        DmaRegion mem = ctx.function().allocateDma(g.bufferBytes());
        DbrPool.Slot slot = null;
        int qpn = -1;
        try {
            slot = ctx.dbrs().allocate();
            int pages = g.bufferBytes() / 4096;
            PrmCommand c = PrmCommand.of(CmdOpcode.CREATE_QP, QpLayouts.CREATE_QP_IN, QpLayouts.CREATE_QP_IN.sizeBytes(pages),
                            QpLayouts.CREATE_QP_OUT, QpLayouts.CREATE_QP_OUT.sizeBytes())
                    .set("qpc.st", init.isGsi() ? QpLayouts.ST_QP1 : QpModify.qpcSt(init.type()))
                    .set("qpc.pm_state", QpLayouts.PM_STATE_MIGRATED)
                    .set("qpc.pd", pd.pdn())
                    .set("qpc.uar_page", ctx.hca().uar())
                    .set("qpc.log_page_size", 0)
                    .set("qpc.page_offset", 0)
                    .set("qpc.cqn_snd", init.sendCq().cqn())
                    .set("qpc.cqn_rcv", init.recvCq().cqn())
                    .set("qpc.dbr_addr", slot.iova());
            if (init.isBlockSelfMulticastLoopback()) {
                c.set("qpc.block_lb_mc", 1); // mlx5_ib create_qp: IB_QP_CREATE_MULTICAST_LOOPBACK_BLOCK
            }
            if (init.srq() != null) {
                if (!(init.srq() instanceof Mlx5Srq)) {
                    throw new VerbsException(VerbsException.EINVAL, "create QP: SRQ of another provider");
                }
                // the QP has no RQ of its own: its receives take the SRQ's WQEs (kernel mlx5_ib create_qp_common)
                c.set("qpc.rq_type", QpModifyLayouts.RQ_TYPE_SRQ)
                        .set("qpc.srqn_rmpn_xrqn", init.srq().srqn());
            } else if (g.rqWqeCnt() > 0) {
                c.set("qpc.log_rq_stride", g.rqWqeShift() - 4)
                        .set("qpc.log_rq_size", Integer.numberOfTrailingZeros(g.rqWqeCnt()))
                        .set("qpc.rq_type", QpModifyLayouts.RQ_TYPE_REGULAR);
            } else {
                c.set("qpc.rq_type", QpModifyLayouts.RQ_TYPE_ZERO_LEN);
            }
            if (g.sqWqeCnt() > 0) {
                c.set("qpc.log_sq_size", Integer.numberOfTrailingZeros(g.sqWqeCnt()));
            } else {
                c.set("qpc.no_sq", 1);
            }
            for (int i = 0; i < pages; i++) {
                c.setElement("pas", i, mem.iova((long) i * 4096));
            }
            qpn = (int) c.execute(ctx.hca().cmdq()).get("qpn");
            Mlx5Qp qp = new Mlx5Qp(pd, init, g, qpn, mem, slot);
            ctx.qps().put(qpn, qp);
            return qp;
        } catch (RuntimeException e) {
            if (qpn >= 0) {
                try {
                    destroyQp(ctx, qpn);
                } catch (RuntimeException undo) {
                    e.addSuppressed(undo);
                }
            }
            if (slot != null) {
                ctx.dbrs().free(slot);
            }
            mem.close();
            throw Mlx5Errors.of("create " + init.type() + " QP on " + ctx.name(), e);
        }
    }

    private static void destroyQp(Mlx5Context ctx, int qpn) {
        PrmCommand.of(CmdOpcode.DESTROY_QP, QpLayouts.DESTROY_QP_IN, QpLayouts.DESTROY_QP_OUT).set("qpn", qpn)
                .execute(ctx.hca().cmdq());
    }

    // ---- for QpModify ----

    QpAttributes attributesNow() {
        return currentAttributes();
    }

    HcaCaps caps() {
        return ctx.hca().caps();
    }

    int pdn() {
        return pd.pdn();
    }

    int sendCqn() {
        return sendCq.cqn();
    }

    int recvCqn() {
        return recvCq.cqn();
    }

    long dbrIova() {
        return dbr.iova();
    }

    /** The Q counter set this QP is counted in (qpc.counter_set_id at RST2INIT): its own or the port's; -1: none. */
    int counterSetId() {
        return ownCounterSet >= 0 ? ownCounterSet : ctx.hca().qCounter();
    }

    /** Its own Q counter set's values by name (Mlx5Options.perQpCounters), else nothing. Runs a command. */
    @Override
    public java.util.Map<String, Long> statistics() {
        int set = ownCounterSet;
        return set < 0 ? java.util.Collections.emptyMap() : Mlx5Context.byName(ctx.queryQCounter(set));
    }

    // ---- verbs ----

    @Override
    public SendQueue sendQueue() {
        return builder;
    }

    @Override
    protected void driverModify(QpAttributes attr, QpState current, QpState next) {
        if (current == QpState.RESET && next == QpState.RESET) {
            return;   // mlx5_ib: nothing to do
        }
        int extra = attr.mask() & ~(QpAttrMask.STATE | QpAttrMask.CUR_STATE | QpAttrMask.EN_SQD_ASYNC_NOTIFY);
        if (next == QpState.SQD) {
            if (directSq != null) {
                throw new VerbsException(VerbsException.EINVAL, "modify " + describe() + " " + current
                        + "->SQD: its send queue is driven directly (Mlx5Direct), whose doorbells the provider cannot hold");
            }
            if (extra != 0) {
                throw new VerbsException(VerbsException.EOPNOTSUPP, "modify " + describe() + " " + current
                        + "->SQD: mlx5 cannot change " + QpAttrMask.describe(extra) + " of a drained QP");
            }
            if (sq != null) {
                sq.hold(true);   // no device command: see the class comment
            }
            return;
        }
        QpState device = current == QpState.SQD ? QpState.RTS : current;   // the device never left RTS
        try {
            if (current == QpState.RESET && next == QpState.INIT && ownCounterSet < 0
                    && ctx.hca().options().perQpCounters()) {
                ownCounterSet = ctx.allocQpCounter(); // mlx5_ib binds a pending counter at RST2INIT
            }
            if (!(current == QpState.SQD && next == QpState.RTS && extra == 0)) {
                QpModify.build(this, attr, device, next).execute(ctx.hca().cmdq());
            }
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("modify " + describe() + " " + current + "->" + next, e);
        }
        if (next == QpState.RESET) {
            resetQueues();
        } else if (sq != null && sq.held()) {
            sq.hold(false);
            sq.ringDoorbell();   // to RTS: the held WRs run; to ERR: the device flushes them
        }
    }

    /** After 2RST: stale CQEs out of the CQs, rings and doorbell record back to 0 (rdma-core mlx5_modify_qp). */
    private void resetQueues() {
        dropDirectSq(describe() + " was reset: its send queue's counters start again at 0; take it again after RTS");
        recvCq.clean(qpn(), srqRing);
        if (sendCq != recvCq) {
            sendCq.clean(qpn());
        }
        if (sq != null) {
            sq.reset();
        }
        if (rq != null) {
            rq.reset();
        }
        dbr.record().setRecvCounter(0);
        dbr.record().setSendCounter(0);
    }

    /** A dead device refuses the chain with EIO (checked once per chain: the check is a volatile read). */
    @Override
    protected void driverBeginPostSend() {
        checkSendsByVerbs();
        checkDeviceAlive("post send");
    }

    /** Refuses a verbs post (postSend, the builder) once {@link Mlx5Direct} drives the send queue. */
    void checkSendsByVerbs() {
        if (directSq != null) {
            throw new VerbsException(VerbsException.EINVAL, "post send on " + describe()
                    + ": its send queue is driven directly (Mlx5Direct.sendQueue)");
        }
    }

    /** {@link Mlx5Direct#sendQueue}: the send ring driven directly from now on, until a reset or destroy. */
    synchronized DirectSq takeDirectSq() {
        checkOpen();
        if (sq == null) {
            throw new VerbsException(VerbsException.EINVAL, describe() + " has no send queue");
        }
        if (type() == QpType.UD) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, describe() + ": a direct send queue writes RDMA WQEs"
                    + " (no datagram segment); take one of an RC or UC QP");
        }
        if (directSq != null) {
            return directSq;
        }
        QpState s = state();
        if (s == QpState.RESET || s == QpState.SQD) {
            throw new VerbsException(VerbsException.EINVAL, describe() + " in state " + s
                    + ": a direct send queue is taken in INIT, RTR, RTS or ERR");
        }
        try {
            directSq = sq.direct();
        } catch (IllegalStateException e) {
            throw new VerbsException(VerbsException.EBUSY, describe() + ": " + e.getMessage(), e);
        }
        return directSq;
    }

    private synchronized void dropDirectSq(String reason) {
        if (directSq != null) {
            directSq.invalidate(reason);
            directSq = null;
        }
    }

    /**
     * A full queue posts nothing more. The common WR (SEND, RDMA WRITE or RDMA READ, with or without immediate, of at
     * most one SGE, not inline, not UD) goes to {@link #driverPostCommonSend}, which writes its whole WQE in one call,
     * the same bytes as the segment-by-segment path; every other WR to {@link #postSendBySegments}. Kept small so that
     * the posting loop inlines it.
     */
    @Override
    protected boolean driverPostSend(SendWr wr) {
        if (wr.numSge() <= 1 && (wr.sendFlags() & SendFlags.INLINE) == 0 && type() != QpType.UD
                && wr.opcode().isPlain()) {
            return driverPostCommonSend(wr);
        }
        SqBuffer q = sq;
        if (q == null || q.full()) {
            return false;
        }
        return postSendBySegments(wr);
    }

    /** The common WR, as postSend checked it: its whole WQE in one call, no test of its kind. */
    @Override
    protected boolean driverPostCommonSend(SendWr wr) {
        SqBuffer q = sq;
        if (q == null || q.full()) {
            return false;
        }
        writeCommon(q, wr);
        return true;
    }

    /**
     * A chain of common WRs: the queue's room is learned once ({@link SqBuffer#room}), so the loop holds no
     * {@link SqBuffer#full()}, whose acquire, compiled into the loop, had the JIT load every field of the ring again
     * at every WR (B/A 0.85 / 0.80 at batch 8 / 32). What the JIT hoists out of the loop would cost a chain of one
     * WR about 10% more, so that one takes {@link #driverPostCommonSend}. Longer chains come here only from postSend's
     * path after its check walk: a queue full when {@link #driverPostCommonChain} started, or a QP of max_send_sge 0.
     */
    @Override
    protected int driverPostCommonSends(SendWr first, int n) {
        if (n == 1) {
            return driverPostCommonSend(first) ? 1 : 0;
        }
        SqBuffer q = sq;
        if (q == null) {
            return 0;
        }
        int room = q.room(n);
        int posted = 0;
        for (SendWr w = first; w != null && posted < room; w = w.next()) {
            writeCommon(q, w);
            posted++;
        }
        return posted;
    }

    /**
     * The chain checked as it is written, in one walk: a separate check walk waits on every WR's {@code next} pointer
     * once more. An uncommon WR drops what the walk wrote ({@link SqBuffer#abortBatch}: nothing of it was published)
     * and returns -1, and postSend checks and posts the chain WR by WR. The first WR is checked before the batch
     * starts and written before the loop: taken into the loop, with the full queue's -1 folded into it, the chain read
     * 65-72 -> 69-85 ns at batch 8 and 202-218 -> 231-287 ns at batch 32 (JMH p50, the Intel host).
     */
    @Override
    protected int driverPostCommonChain(SendWr first, long maxLength, int refuse) {
        SqBuffer q = sq;
        if (q == null || directSq != null || ctx.deadReason() != null || !commonSendWr(first, maxLength, refuse)) {
            return -1;   // postSend's own walk gives the refusal
        }
        SendWr w = first.next();
        int room = q.startBatch();
        if (room == 0) {
            return -1;   // full: the walk checks the whole chain
        }
        writeCommon(q, first);
        int posted = 1;
        for (; w != null && posted < room; w = w.next()) {
            if (!commonSendWr(w, maxLength, refuse)) {
                q.abortBatch();
                return -1;
            }
            writeCommon(q, w);
            posted++;
        }
        for (; w != null; w = w.next()) {   // the queue is full: the rest is checked all the same
            if (!commonSendWr(w, maxLength, refuse)) {
                q.abortBatch();
                return -1;
            }
        }
        return posted;
    }

    private static void writeCommon(SqBuffer q, SendWr wr) {
        Sge s = wr.numSge() == 1 ? wr.firstSge() : null;
        Mlx5SendQueue.writePlain(q, wr.opcode().ordinal(), wr.wrId(), wr.sendFlags(), wr.immData(), wr.rkey(),
                wr.remoteAddr(), s == null ? 0 : s.lkey(), s == null ? 0 : s.addr(), s == null ? 0 : s.length());
    }

    /** Any other WR, segment by segment (the queue has room: {@link #driverPostSend} checked). */
    private boolean postSendBySegments(SendWr wr) {
        try {
            WrOpcode op = wr.opcode();
            if (op.isLocal() || op == WrOpcode.SEND_WITH_INV) {
                return postWindowOp(wr, op);
            }
            builder.open(op, wr.wrId(), wr.sendFlags(), wr.immData(), wr.rkey(), wr.remoteAddr(), wr.compareAdd(), wr.swap());
            if (type() == QpType.UD) {
                sq.datagram(((Mlx5Ah) wr.ah()).av(), 0, wr.remoteQpn(), wr.remoteQkey());
            }
            if ((wr.sendFlags() & SendFlags.INLINE) != 0) {
                for (int i = 0; i < wr.numSge(); i++) {
                    Sge s = wr.sge(i);
                    if (s.length() != 0) {
                        MemoryRegion mr = heldInlineSource(s.lkey(), s.addr(), s.length());
                        try {
                            inlineView.wrap(s.addr(), s.length());
                            sq.inline(inlineView, 0, s.length());
                        } finally {
                            mr.unhold();   // the copy is done: the MR may be deregistered and its memory unmapped
                        }
                    }
                }
            } else {
                for (int i = 0; i < wr.numSge(); i++) {
                    Sge s = wr.sge(i);
                    sq.data(s.lkey(), s.addr(), s.length());
                }
            }
            sq.finish();
            return true;
        } catch (RuntimeException e) {
            sq.dropOpenWqe();    // this WR is refused: its half-written WQE must not stay open for the next post
            sq.ringDoorbell();   // the WRs of the chain before this one are posted, as ibv_post_send does
            throw e;
        }
    }

    /** BIND_MW, LOCAL_INV (UMR WQEs) and SEND_WITH_INV (SEND_INVAL with the rkey in imm, then its data). */
    private boolean postWindowOp(SendWr wr, WrOpcode op) {
        if (op == WrOpcode.BIND_MW && wr.bindInfo().length() > 1L << 31) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "bind MW on " + describe() + ": length "
                    + wr.bindInfo().length() + " exceeds 2^31 (one KLM)");
        }
        builder.open(op, wr.wrId(), wr.sendFlags(), op == WrOpcode.BIND_MW ? 0 : wr.invalidateRkey(), 0, 0, 0, 0);
        if (op == WrOpcode.BIND_MW) {
            builder.umrBind(wr.mw(), wr.bindRkey(), wr.bindInfo());
        } else if (op == WrOpcode.LOCAL_INV) {
            builder.localInv();
        } else {
            for (int i = 0; i < wr.numSge(); i++) {
                Sge s = wr.sge(i);
                sq.data(s.lkey(), s.addr(), s.length());
            }
        }
        sq.finish();
        return true;
    }

    /**
     * The registration inline source bytes lie in, held ({@link MemoryRegion#hold()}) so that it cannot be
     * deregistered, nor its region closed, while they are copied; the caller unholds it after the copy. Java
     * cannot check a raw address, so the span must lie in a registration of this QP's PD (found by its lkey),
     * else the WR is refused.
     */
    private MemoryRegion heldInlineSource(int lkey, long addr, int length) {
        MemoryRegion mr = ctx.mrs().get(lkey);
        if (mr != null && mr.hold()) {
            if (mr.pd() == pd && !mr.isClosed() && mr.contains(addr, length & 0xffffffffL)) {
                return mr;
            }
            mr.unhold();
        }
        throw new VerbsException(VerbsException.EINVAL, "post send on " + describe() + ": INLINE SGE addr 0x"
                + Long.toHexString(addr) + " length " + length + " lkey 0x" + Integer.toHexString(lkey)
                + " does not lie in a memory registration of this QP's PD");
    }

    @Override
    protected void driverRingSendDoorbell() {
        sq.ringDoorbell();
    }

    /** As for sends: a dead device refuses the chain with EIO, checked once per chain. */
    @Override
    protected void driverBeginPostRecv() {
        checkDeviceAlive("post recv");
    }

    @Override
    protected boolean driverPostRecv(RecvWr wr) {
        RqBuffer q = rq;
        return q != null && ReceiveRing.post(q, wr);
    }

    @Override
    protected void driverRingRecvDoorbell() {
        rq.ringDoorbell();
    }

    /** ATTACH_TO_MCG (mlx5_ib_mcg_attach: the QPN and the GID in network order). */
    @Override
    protected void driverAttachMcast(io.jhca.verbs.Gid mgid, int mlid) {
        try {
            PrmCommand.of(CmdOpcode.ATTACH_TO_MCG, McgLayouts.ATTACH_TO_MCG_IN, McgLayouts.ATTACH_TO_MCG_OUT)
                    .set("qpn", qpn()).setBytes("multicast_gid", mgid.bytes()).execute(ctx.hca().cmdq());
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("attach " + describe() + " to " + mgid, e);
        }
    }

    /** DETACH_FROM_MCG (mlx5_ib_mcg_detach). */
    @Override
    protected void driverDetachMcast(io.jhca.verbs.Gid mgid, int mlid) {
        try {
            PrmCommand.of(CmdOpcode.DETACH_FROM_MCG, McgLayouts.DETACH_FROM_MCG_IN, McgLayouts.DETACH_FROM_MCG_OUT)
                    .set("qpn", qpn()).setBytes("multicast_gid", mgid.bytes()).execute(ctx.hca().cmdq());
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("detach " + describe() + " from " + mgid, e);
        }
    }

    @Override
    protected void destroy() {
        dropDirectSq(describe() + " was destroyed");
        try {
            if (state() != QpState.RESET) {
                QpModify.build(this, new QpAttributes(), state(), QpState.RESET).execute(ctx.hca().cmdq());
            }
            destroyQp(ctx, qpn());
            if (ownCounterSet >= 0) {
                ctx.freeQpCounter(ownCounterSet);
                ownCounterSet = -1;
            }
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("destroy " + describe() + " on " + ctx.name(), e);
        }
        ctx.qps().remove(qpn());
        recvCq.clean(qpn(), srqRing);
        if (sendCq != recvCq) {
            sendCq.clean(qpn());
        }
        ctx.dbrs().free(dbr);
        ctx.bfregs().release(bfreg);
        memory.close();
    }

    // ---- CqeOwner ----

    @Override
    public SqBuffer sendRing() {
        return sq;
    }

    @Override
    public RqBuffer recvRing() {
        return rq;
    }

    @Override
    public io.jhca.mlx5.ring.SrqBuffer srqRing() {
        return srqRing;
    }

    /** The device reported that this QP, in error, took its last WQE from its SRQ. */
    @Override
    public boolean isUd() {
        return type() == QpType.UD;
    }

    @Override
    public void onErrorCompletion(boolean requester, WcStatus status) {
        if (state() == QpState.ERR) {
            return;
        }
        if (requester && type() != QpType.RC) {
            enterSqError();   // IBTA: a UD/UC send error stops only the send queue
        } else {
            enterError();
        }
    }

    /** An async QP event from the EQ (mapping as mlx5_ib's mlx5_ib_qp_event). */
    void asyncError(int eventType) {
        AsyncEvent.Type t;
        boolean error = true;
        switch (eventType) {
            case EventType.WQ_INVAL_REQ_ERROR: t = AsyncEvent.Type.QP_REQ_ERR; break;
            case EventType.WQ_ACCESS_ERROR: t = AsyncEvent.Type.QP_ACCESS_ERR; break;
            case EventType.PATH_MIG_FAILED: t = AsyncEvent.Type.PATH_MIG_ERR; error = false; break;
            case EventType.PATH_MIG: t = AsyncEvent.Type.PATH_MIG; error = false; break;
            case EventType.COMM_EST: t = AsyncEvent.Type.COMM_EST; error = false; break;
            case EventType.SQ_DRAINED: t = AsyncEvent.Type.SQ_DRAINED; error = false; break;
            case EventType.SRQ_LAST_WQE: t = AsyncEvent.Type.QP_LAST_WQE_REACHED; error = false; break;
            default: t = AsyncEvent.Type.QP_FATAL; break;
        }
        if (error) {
            enterError();
        }
        ctx.event(AsyncEvent.of(t, this, "device event type 0x" + Integer.toHexString(eventType)));
    }

    // ---- a dead device ----

    /** Refuses a post once the device is dead ({@link Mlx5Context#checkAlive}). */
    void checkDeviceAlive(String what) {
        ctx.checkAlive(what, this);
    }

    /** The device died: the QP is in ERR from now on; its outstanding WRs are flushed by its CQs' polls. */
    void deviceDead() {
        DirectSq d = directSq;
        if (d != null) {
            d.invalidate(describe() + ": the device is dead (" + ctx.deadReason() + ")");
        }
        if (state() != QpState.ERR) {
            enterError();
        }
    }

    /** Whether WRs of this QP that complete on {@code cq} are outstanding (mlx5_ib_handle_internal_error's test). */
    boolean hasOutstanding(Mlx5Cq cq) {
        return (sq != null && sendCq == cq && sq.outstanding() > 0) || (rq != null && recvCq == cq && rq.outstanding() > 0);
    }

    /**
     * One software completion with WR_FLUSH_ERR for the oldest outstanding WR of this QP that completes on {@code cq}:
     * sends first, then receives, each queue in posting order, every WR whether signaled or not (mlx5_ib cq.c
     * {@code sw_comp}). False when none is left. Receives taken from an SRQ are the SRQ's and stay there, as on a QP
     * that enters ERR. Called by the thread polling {@code cq}.
     */
    boolean flushOne(Mlx5Cq cq, WorkCompletion wc) {
        if (sq != null && sendCq == cq && sq.outstanding() > 0) {
            int slot = sq.flushOldest();
            wc.set(sq.wrId(slot), WcStatus.WR_FLUSH_ERR, sq.wcOpcode(slot), qpn(), 0)
                    .vendorErr(CqeSyndrome.WR_FLUSH_ERR);
            return true;
        }
        if (rq != null && recvCq == cq && rq.outstanding() > 0) {
            wc.set(rq.flushOldest(), WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, qpn(), 0)
                    .vendorErr(CqeSyndrome.WR_FLUSH_ERR);
            return true;
        }
        return false;
    }
}
