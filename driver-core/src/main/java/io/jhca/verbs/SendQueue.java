package io.jhca.verbs;

import org.agrona.DirectBuffer;

/**
 * The in-place send builder, in the style of rdma-core's {@code ibv_wr_*} API ("QPEx"):
 *
 * <pre>
 * sq.start();
 * sq.wrId(1).flags(SendFlags.SIGNALED).rdmaWrite(rkey, raddr).sge(mr, 0, 64);
 * sq.wrId(2).flags(0).send().sge(mr, 64, 8);
 * int err = sq.complete();      // one doorbell for the batch; 0 or ENOMEM (queue full: nothing posted)
 * </pre>
 *
 * Each opcode call opens a work request; the SGE, inline and UD address calls that follow complete it; the
 * next opcode call or {@link #complete()} closes it. {@code wrId} and {@code flags} persist until changed,
 * as the fields of {@code struct ibv_qp_ex} do. A misuse (wrong opcode for the QP type, too many SGEs, too much
 * inline data or a source range outside the buffer, a message longer than the port's max_msg_sz, an atomic
 * without one 8-byte SGE, a UD WR without an address, a QP closed under the batch) throws
 * {@link VerbsException} at once and drops the batch, leaving the queue ready for the next {@link #start()};
 * a full queue is the return value of {@link #complete()}. The provider writes the WQE straight into its ring:
 * nothing is allocated and nothing is copied twice.
 *
 * <p>Threading (see {@link QueuePair}): a batch belongs to the thread that started it. On a shared QP,
 * {@link #start()} takes the send queue's lock and {@link #complete()} or {@link #abort()} (or an error that
 * drops the batch) releases it, so other threads' batches and postSend calls wait and never interleave; a
 * builder call from a thread other than the one whose batch is open throws {@link IllegalStateException}.
 * On a single-threaded QP every call must come from the owner thread.
 */
public abstract class SendQueue {
    private final QueuePair qp;
    private long wrId;
    private int flags;
    private boolean started;
    private boolean full;
    /**
     * The WR the builder is on, in one word, so that the common WR's opcode call and its first SGE store it once each
     * (a store per WR for each of open, sges, bytes, inline, udAddressed, deferred and written cost the loop as much as
     * the WQE's own stores). {@link #NONE}, or the opcode's ordinal ({@link #OP_MASK}) with:
     * <ul>
     * <li>no bit: open, segment by segment at the provider ({@link #driverOpenWr}); {@link #sges}, {@link #bytes},
     *     {@link #inline} and {@link #udAddressed} count for it;</li>
     * <li>{@link #DEFERRED}: an open plain WR whose WQE is not written yet, kept in the d-fields below, with
     *     {@link #HAS_SGE} its one SGE too; its counts are implied ({@link #settleCounts});</li>
     * <li>{@link #WRITTEN}: closed for the builder (the sign bit: any closed state is negative), given to the provider at
     *     its first SGE ({@link #writeAtFirstSge}), {@link #bytes} that SGE's length, until a second SGE reopens it
     *     ({@link #reclaimWritten}) or another WR opens.</li>
     * </ul>
     * An int and not the enum reference: a reference store per WR costs the GC's write barrier.
     */
    private int wr = NONE;
    private static final int NONE = -1;
    private static final int OP_MASK = 0xff;
    private static final int DEFERRED = 1 << 8;
    private static final int HAS_SGE = 1 << 9;
    private static final int WRITTEN = Integer.MIN_VALUE;
    private static final WrOpcode[] OPCODES = WrOpcode.values();
    /*
     * Each opcode call passes its opcode as a static final ordinal and asks about it through static final masks: with
     * the call inlined both are constants and the questions fold away. An enum constant's fields are not constants to
     * the JIT (it trusts no final instance field of an ordinary class), so op.isAtomic() was a load and a test per WR.
     */
    private static final int OP_SEND = WrOpcode.SEND.ordinal();
    private static final int OP_SEND_WITH_IMM = WrOpcode.SEND_WITH_IMM.ordinal();
    private static final int OP_RDMA_WRITE = WrOpcode.RDMA_WRITE.ordinal();
    private static final int OP_RDMA_WRITE_WITH_IMM = WrOpcode.RDMA_WRITE_WITH_IMM.ordinal();
    private static final int OP_RDMA_READ = WrOpcode.RDMA_READ.ordinal();
    private static final int OP_ATOMIC_CMP_AND_SWP = WrOpcode.ATOMIC_CMP_AND_SWP.ordinal();
    private static final int OP_ATOMIC_FETCH_AND_ADD = WrOpcode.ATOMIC_FETCH_AND_ADD.ordinal();
    private static final int OP_SEND_WITH_INV = WrOpcode.SEND_WITH_INV.ordinal();
    private static final int OP_LOCAL_INV = WrOpcode.LOCAL_INV.ordinal();
    private static final int OP_BIND_MW = WrOpcode.BIND_MW.ordinal();
    private static final int ATOMIC_OPS = maskOf(WrOpcode::isAtomic);
    private static final int PLAIN_OPS = maskOf(WrOpcode::isPlain);
    private static final int IMM_OPS = maskOf(WrOpcode::hasImmediate);

    private static int maskOf(java.util.function.Predicate<WrOpcode> kind) {
        int mask = 0;
        for (WrOpcode op : OPCODES) {
            mask |= kind.test(op) ? 1 << op.ordinal() : 0;
        }
        return mask;
    }
    private int sges;
    private long bytes;
    private boolean inline;
    private boolean udAddressed;
    /*
     * The deferred WR ({@link #DEFERRED}: SEND, RDMA WRITE or RDMA READ, with or without immediate, on RC or UC): the
     * opcode call keeps its fields here and hands the whole WR to {@link #driverPlainWr} in one call, at its first SGE
     * or at its close, so a provider can write it at once (mlx5: one WQE in one call, as postSend does). A second SGE
     * or inline data writes it the segment way first ({@link #materialize}). dImm only for an opcode that carries one.
     */
    private long dWrId;
    private int dFlags;
    private int dImm;
    private int dRkey;
    private long dRaddr;
    private int dLkey;
    private long dAddr;
    private int dLength;
    /**
     * Providers that take it ({@link #SendQueue(QueuePair, boolean)}): the deferred WR goes to {@link #driverPlainWr} at
     * its first SGE, with that SGE's arguments still in registers, instead of being kept in the fields above until it
     * closes; it is then {@link #WRITTEN}, until a second SGE reopens it ({@link #driverReopenPlainWr}). A few field
     * stores and loads fewer per WR, and an opcode call without the WQE writer inlined in it is small enough for the JIT
     * to inline into the application's loop.
     */
    private final boolean writeAtFirstSge;

    /** Opcodes this QP's type refuses, as bits by ordinal; the QP's type is fixed, so set once. */
    private final int refusedOps;
    /** Whether plain WRs may be deferred to their close (not on UD, whose WQE carries an address). */
    private final boolean deferPlain;

    // Per batch, set by start(): the checks every call repeats are then a compare or a bit test against these.
    /** The thread whose batch is open (null: none): a builder call from it needs no lock or owner check. */
    private Thread batchThread;
    /**
     * The longest SGE the common WR's {@link #sge} takes without the full check: the port's max_msg_sz capped at
     * 2^31-1 as the batch began (postSend reads it per chain), or -1 if max_send_sge is 0. One compare per WR.
     */
    private long batchSgeLimit;

    /** UD carries SEND and SEND_WITH_IMM only; UC has no RDMA READ and no atomics (IBTA 9.4, the verbs man pages). */
    private static final int REFUSED_ON_UD = ~(1 << WrOpcode.SEND.ordinal() | 1 << WrOpcode.SEND_WITH_IMM.ordinal());
    private static final int REFUSED_ON_UC = 1 << WrOpcode.RDMA_READ.ordinal() | 1 << WrOpcode.ATOMIC_CMP_AND_SWP.ordinal()
            | 1 << WrOpcode.ATOMIC_FETCH_AND_ADD.ordinal();

    protected SendQueue(QueuePair qp) {
        this(qp, false);
    }

    /**
     * @param writeAtFirstSge the provider takes the common WR at its first SGE ({@link #driverPlainWr} before the WR
     *                        closes) and implements {@link #driverReopenPlainWr} for a second SGE
     */
    protected SendQueue(QueuePair qp, boolean writeAtFirstSge) {
        this.qp = qp;
        QpType t = qp.type();
        this.refusedOps = t == QpType.UD ? REFUSED_ON_UD : t == QpType.UC ? REFUSED_ON_UC : 0;
        this.deferPlain = t != QpType.UD;
        this.writeAtFirstSge = writeAtFirstSge;
    }

    private ThreadGuard guard() {
        return qp.sendGuard();
    }

    public final QueuePair qp() {
        return qp;
    }

    /** Begins a batch ({@code ibv_wr_start}); on a shared QP, waits for another thread's batch or post to end. */
    public final SendQueue start() {
        guard().enter(qp);
        if (started) {
            guard().exit();   // the lock is held once more by this thread's open batch, which stays open
            throw new VerbsException(VerbsException.EINVAL, "send builder of " + qp.describe() + ": start() twice without complete() or abort()");
        }
        try {
            qp.checkOpen();
            qp.checkCanPostSend();
            started = true;
            full = false;
            wr = NONE;
            driverStart();
            batchSgeLimit = qp.capabilities().maxSendSge() > 0 ? Math.min(qp.maxMessageSize(), Integer.MAX_VALUE) : -1;
            batchThread = Thread.currentThread();
        } catch (RuntimeException | Error e) {
            started = false;
            guard().exit();
            throw e;
        }
        return this;
    }

    public final SendQueue wrId(long id) {
        checkCaller("wrId");
        wrId = id;
        return this;
    }

    /** {@link SendFlags} bits for the WRs that follow. */
    public final SendQueue flags(int sendFlags) {
        checkCaller("flags");
        if ((sendFlags & ~SendFlags.ALL) != 0) {
            throw fail("unknown send flags 0x" + Integer.toHexString(sendFlags));
        }
        flags = sendFlags;
        return this;
    }

    public final SendQueue send() {
        return openWr(OP_SEND, 0, 0, 0, 0, 0);
    }

    public final SendQueue sendImm(int imm) {
        return openWr(OP_SEND_WITH_IMM, imm, 0, 0, 0, 0);
    }

    public final SendQueue rdmaWrite(int rkey, long remoteAddr) {
        return openWr(OP_RDMA_WRITE, 0, rkey, remoteAddr, 0, 0);
    }

    public final SendQueue rdmaWriteImm(int rkey, long remoteAddr, int imm) {
        return openWr(OP_RDMA_WRITE_WITH_IMM, imm, rkey, remoteAddr, 0, 0);
    }

    public final SendQueue rdmaRead(int rkey, long remoteAddr) {
        return openWr(OP_RDMA_READ, 0, rkey, remoteAddr, 0, 0);
    }

    public final SendQueue atomicCmpSwp(int rkey, long remoteAddr, long compare, long swap) {
        return openWr(OP_ATOMIC_CMP_AND_SWP, 0, rkey, remoteAddr, compare, swap);
    }

    public final SendQueue atomicFetchAdd(int rkey, long remoteAddr, long add) {
        return openWr(OP_ATOMIC_FETCH_AND_ADD, 0, rkey, remoteAddr, add, 0);
    }

    /** A SEND whose responder invalidates {@code invalidateRkey} ({@code ibv_wr_send_inv}); RC only. */
    public final SendQueue sendInv(int invalidateRkey) {
        checkMwOp(WrOpcode.SEND_WITH_INV);
        return openWr(OP_SEND_WITH_INV, invalidateRkey, 0, 0, 0, 0);
    }

    /** Invalidates a type 2 window's {@code rkey} ({@code ibv_wr_local_inv}); no SGEs follow. */
    public final SendQueue localInv(int rkey) {
        checkMwOp(WrOpcode.LOCAL_INV);
        return openWr(OP_LOCAL_INV, rkey, 0, 0, 0, 0);
    }

    /**
     * Binds a window ({@code ibv_wr_bind_mw}) under {@code rkey}, the window's key with the new key byte the caller
     * chose; no SGEs follow. Checked as {@link SendWr#bindMw} is.
     */
    public final SendQueue bindMw(MemoryWindow mw, int rkey, MwBind bind) {
        checkCaller("bindMw");
        if (bind == null) {
            throw fail("bindMw without bind information");
        }
        try {
            MwRules.checkPost(qp, mw, bind, mw == null ? MwType.TYPE_2 : mw.type());
        } catch (VerbsException e) {
            throw dropped(e);
        }
        if ((rkey & 0xFFFFFF00) != (mw.rkey() & 0xFFFFFF00)) {
            throw fail("bindMw rkey 0x" + Integer.toHexString(rkey) + " is not of " + mw.describe());
        }
        openWr(OP_BIND_MW, 0, rkey, 0, 0, 0);
        if (!full) {
            try {
                driverBindMw(mw, rkey, bind);
            } catch (RuntimeException e) {
                throw driverFailed(e);
            }
        }
        return this;
    }

    private void checkMwOp(WrOpcode op) {
        checkCaller(op.toString());
        QpType t = qp.type();
        if (t != QpType.RC && !(t == QpType.UC && op != WrOpcode.SEND_WITH_INV)) {
            throw fail("opcode " + op + " is not supported on " + t);
        }
        if (!qp.pd().context().queryDevice().supports(MwType.TYPE_2)) {
            throw fail(op + ": " + qp.pd().context().describe() + " has no type 2 memory windows");
        }
    }

    /** UD destination of the open WR ({@code ibv_wr_set_ud_addr}). */
    public final SendQueue udAddr(AddressHandle ah, int remoteQpn, int remoteQkey) {
        checkCaller("udAddr");
        reclaimWritten();   // refused below: udAddr on a QP that is not UD
        requireOpen("udAddr");
        if (qp.type() != QpType.UD) {
            throw fail("udAddr on a " + qp.type() + " QP");
        }
        if (ah == null || ah.isClosed() || ah.pd() != qp.pd()) {
            throw fail("UD address handle missing, closed or of another PD");
        }
        udAddressed = true;
        if (!full) {
            try {
                driverUdAddr(ah, remoteQpn, remoteQkey);
            } catch (RuntimeException e) {
                throw driverFailed(e);
            }
        }
        return this;
    }

    /** One gather element of the open WR ({@code ibv_wr_set_sge}; call again for a list). */
    public final SendQueue sge(int lkey, long addr, int length) {
        long len = length & 0xFFFFFFFFL;   // an SGE length is unsigned (struct ibv_sge)
        int w = wr;
        if ((w & ~OP_MASK) == DEFERRED && Thread.currentThread() == batchThread && len <= batchSgeLimit) {
            // the deferred WR's first SGE, from the batch's thread, within the limits
            int op = w & OP_MASK;
            if (writeAtFirstSge) {   // into the ring now; a second SGE reopens it
                wr = WRITTEN | op;
                bytes = len;
                try {
                    if (!full && !driverPlainWr(op, dWrId, dFlags, deferredImm(op), dRkey, dRaddr, lkey, addr, length,
                            true)) {
                        full = true;
                    }
                } catch (RuntimeException e) {
                    throw driverFailed(e);
                }
                return this;
            }
            wr = w | HAS_SGE;   // kept for the WR's close
            dLkey = lkey;
            dAddr = addr;
            dLength = length;
            return this;
        }
        return checkedSge(lkey, addr, length);
    }

    /** {@link #sge} with every check, for any SGE but the common WR's first. */
    private SendQueue checkedSge(int lkey, long addr, int length) {
        checkCaller("sge");
        boolean reopen = reclaimWritten();
        requireOpen("sge");
        settleCounts();
        if (inline) {
            throw fail("sge after inline data in one WR");
        }
        if (opened().isLocal()) {
            throw fail("sge after " + opened());
        }
        if (++sges > qp.capabilities().maxSendSge()) {
            throw fail(sges + " SGEs exceed max_send_sge " + qp.capabilities().maxSendSge());
        }
        bytes += length & 0xFFFFFFFFL;   // an SGE length is unsigned (struct ibv_sge)
        if (opened().isAtomic() && (sges > 1 || length != 8)) {
            throw fail(opened() + " needs exactly one 8-byte SGE");
        }
        if (bytes > qp.maxMessageSize() || bytes > Integer.MAX_VALUE) {
            throw fail(qp.messageTooLong(String.valueOf(opened()), bytes).getMessage());
        }
        if (reopen && !full) {   // the WR written at its first SGE takes more: its WQE is open again
            try {
                driverReopenPlainWr();
            } catch (RuntimeException e) {
                throw driverFailed(e);
            }
        }
        if ((wr & DEFERRED) != 0) {
            if (sges == 1) {
                wr |= HAS_SGE;
                dLkey = lkey;
                dAddr = addr;
                dLength = length;
                return this;
            }
            materialize(true);
        }
        if (!full) {
            try {
                driverSge(lkey, addr, length);
            } catch (RuntimeException e) {
                throw driverFailed(e);
            }
        }
        return this;
    }

    public final SendQueue sge(MemoryRegion mr, long offset, int length) {
        return sge(mr.lkey(), mr.address() + offset, length);
    }

    /** Inline data for the open WR ({@code ibv_wr_set_inline_data}): copied into the WQE now. */
    public final SendQueue inlineData(DirectBuffer src, int offset, int length) {
        checkCaller("inlineData");
        reclaimWritten();   // refused below: inline data after an SGE
        requireOpen("inlineData");
        settleCounts();
        if ((wr & OP_MASK) == OP_RDMA_READ || opened().isAtomic() || opened().isLocal()) {
            throw fail("inline data with " + opened());
        }
        if (sges > 0) {
            throw fail("inline data after SGEs in one WR");
        }
        if (src == null) {
            throw fail("inline data from a null buffer");
        }
        if (offset < 0 || length < 0 || offset > src.capacity() - length) {
            throw fail("inline data [offset " + offset + ", length " + length + ") outside the source buffer of "
                    + src.capacity() + " bytes");
        }
        inline = true;
        bytes += length;
        if (bytes > qp.capabilities().maxInlineData()) {
            throw fail("inline data of " + bytes + " bytes exceeds max_inline_data " + qp.capabilities().maxInlineData());
        }
        if ((wr & DEFERRED) != 0) {
            materialize(false);   // inline data never follows an SGE
        }
        if (!full) {
            try {
                driverInline(src, offset, length);
            } catch (RuntimeException e) {
                throw driverFailed(e);
            }
        }
        return this;
    }

    /**
     * Ends the batch ({@code ibv_wr_complete}): rings the doorbell once for all its WRs. Returns 0, or ENOMEM if
     * the send queue filled up, in which case no WR of the batch was posted. A QP closed since {@link #start()}
     * throws (the batch is dropped).
     */
    public final int complete() {
        checkCaller("complete");
        if (!started) {
            throw new VerbsException(VerbsException.EINVAL, "send builder of " + qp.describe() + ": complete() without start()");
        }
        if (qp.isClosed()) {
            throw fail(qp.describe() + " was closed during the batch");
        }
        closeWr();
        try {
            if (full) {
                driverAbort();
                return VerbsException.ENOMEM;
            }
            driverComplete();
            return 0;
        } finally {
            endBatch();
        }
    }

    /** Drops every WR since {@link #start()} ({@code ibv_wr_abort}). */
    public final void abort() {
        checkCaller("abort");
        if (started) {
            try {
                driverAbort();
            } finally {
                endBatch();
            }
        }
    }

    /** The batch is over: forget it and let other threads post. */
    private void endBatch() {
        batchThread = null;
        started = false;
        wr = NONE;
        guard().exit();
    }

    /**
     * Refuses a call from a thread that may not use this builder now: on a shared QP, any thread but the one
     * whose batch is open (when one is); on a single-threaded QP, any thread but the owner.
     */
    private void checkCaller(String call) {
        if (Thread.currentThread() == batchThread) {
            return;   // the thread whose batch is open (only that thread can have stored itself here)
        }
        ThreadGuard g = guard();
        if (!g.heldByCaller(qp) && g.holder() != null) {
            throw g.heldByAnother(qp, call + "()");
        }
    }

    /*
     * Kept under the JIT's inlining limit for a hot method (325 bytecodes): inlined into the application's loop, the
     * opcode's questions fold to constants. What only a misuse reaches is in methods of its own.
     */
    private SendQueue openWr(int op, int imm, int rkey, long raddr, long compareAdd, long swap) {
        if (Thread.currentThread() != batchThread) {   // not the batch's own thread: find out why, and refuse
            refuseCaller(op);
        }
        closeWr();
        // a plain read: a volatile one per WR keeps the JIT from optimizing the application's loop (isClosedPlain)
        if (qp.isClosedPlain() || (refusedOps & 1 << op) != 0 || (ATOMIC_OPS & 1 << op) != 0 && (raddr & 7) != 0) {
            throw refusedWr(op, raddr);
        }
        if (!full && deferPlain && (PLAIN_OPS & 1 << op) != 0) {
            wr = DEFERRED | op;   // its counts are implied until a check needs them (settleCounts)
            dWrId = wrId;
            dFlags = flags;
            if ((IMM_OPS & 1 << op) != 0) {
                dImm = imm;
            }
            dRkey = rkey;
            dRaddr = raddr;
            return this;
        }
        return openSegments(op, imm, rkey, raddr, compareAdd, swap);
    }

    /** An opcode call from a thread that is not the open batch's, or before {@link #start()}: throws. */
    private void refuseCaller(int op) {
        checkCaller(OPCODES[op].toString());
        if (!started) {
            throw new VerbsException(VerbsException.EINVAL, "send builder of " + qp.describe() + ": " + OPCODES[op]
                    + " before start()");
        }
    }

    /** Why {@link #openWr} refuses the WR: its QP closed, its opcode not for the QP's type, or a misaligned atomic. */
    private VerbsException refusedWr(int op, long raddr) {
        if (qp.isClosed()) {
            return fail(qp.describe() + " was closed during the batch");
        }
        if ((refusedOps & 1 << op) != 0) {
            return fail("opcode " + OPCODES[op] + " is not supported on " + qp.type());
        }
        return fail(OPCODES[op] + " remote address 0x" + Long.toHexString(raddr) + " is not 8-byte aligned");
    }

    /** Opens the WR at the provider segment by segment ({@link #driverOpenWr}), its counts zero. */
    private SendQueue openSegments(int op, int imm, int rkey, long raddr, long compareAdd, long swap) {
        wr = op;
        counts(0, 0);
        try {
            if (!full && !driverOpenWr(OPCODES[op], wrId, flags, imm, rkey, raddr, compareAdd, swap)) {
                full = true;
            }
        } catch (RuntimeException e) {
            throw driverFailed(e);
        }
        return this;
    }

    private void closeWr() {
        int w = wr;
        if (w < 0) {
            return;   // none open, or the last one written at its first SGE
        }
        if ((w & DEFERRED) != 0) {
            wr = NONE;
            int op = w & OP_MASK;
            boolean hasSge = (w & HAS_SGE) != 0;
            try {
                if (!driverPlainWr(op, dWrId, dFlags, deferredImm(op), dRkey, dRaddr, dLkey, dAddr,
                        hasSge ? dLength : 0, hasSge)) {
                    full = true;
                }
            } catch (RuntimeException e) {
                throw driverFailed(e);
            }
            return;
        }
        if (qp.type() == QpType.UD && !udAddressed) {
            throw fail("UD " + opened() + " without udAddr()");
        }
        if (opened().isAtomic() && sges != 1) {
            throw fail(opened() + " needs exactly one 8-byte SGE");
        }
        if (!full) {
            try {
                driverCloseWr();
            } catch (RuntimeException e) {
                throw driverFailed(e);
            }
        }
        wr = NONE;
    }

    /**
     * The open deferred WR's counts, which its state implies (no SGE, or the one kept), into the fields the checks
     * read; nothing for any other WR, whose counts are kept as its calls come.
     */
    private void settleCounts() {
        int w = wr;
        if (w >= 0 && (w & DEFERRED) != 0) {
            boolean hasSge = (w & HAS_SGE) != 0;
            counts(hasSge ? 1 : 0, hasSge ? dLength & 0xFFFFFFFFL : 0);
        }
    }

    /** The counts of a WR open segment by segment: {@code sges} SGEs, {@code bytes} in all, no inline data or address. */
    private void counts(int sges, long bytes) {
        this.sges = sges;
        this.bytes = bytes;
        inline = false;
        udAddressed = false;
    }

    /** The deferred WR's immediate: kept only for an opcode that carries one, 0 for the others. */
    private int deferredImm(int op) {
        return (IMM_OPS & 1 << op) != 0 ? dImm : 0;
    }

    /** The deferred WR goes the segment way: opened now, with the SGE kept so far if {@code firstSge}. */
    private void materialize(boolean firstSge) {
        int op = wr & OP_MASK;
        wr = op;
        try {
            if (!full && !driverOpenWr(OPCODES[op], dWrId, dFlags, deferredImm(op), dRkey, dRaddr,
                    0, 0)) {
                full = true;
            }
            if (!full && firstSge) {
                driverSge(dLkey, dAddr, dLength);
            }
        } catch (RuntimeException e) {
            throw driverFailed(e);
        }
    }

    private WrOpcode opened() {
        return OPCODES[wr & OP_MASK];
    }

    /**
     * A call that belongs to the WR written at its first SGE (a second SGE, inline data, an address) makes it the open
     * WR again, segment by segment, for the builder's checks; true if there was one. Only while no other WR was opened
     * since: an opcode call opens its own, and the batch's end forgets it.
     */
    private boolean reclaimWritten() {
        int w = wr;
        if (w >= 0 || w == NONE) {
            return false;
        }
        wr = w & OP_MASK;
        counts(1, bytes);   // bytes: its SGE's length, kept when it was written
        return true;
    }

    private void requireOpen(String call) {
        if (wr < 0) {
            throw fail(call + "() without an opcode call before it");
        }
    }

    private VerbsException fail(String why) {
        return fail(why, null);
    }

    private VerbsException fail(String why, Throwable cause) {
        return dropped(new VerbsException(VerbsException.EINVAL, "send builder of " + qp.describe() + ": " + why
                + (started ? " (batch dropped)" : ""), cause));
    }

    /**
     * A provider call failed: the batch is dropped. If the QP was closed under the batch, by another thread that the
     * per-WR check ({@code isClosedPlain}) may see late, the error says so, with the provider's as its cause (a write
     * into the closed ring's memory, which its bounds check refuses).
     */
    private RuntimeException driverFailed(RuntimeException e) {
        if (qp.closedUnder(e)) {
            return fail(qp.describe() + " was closed during the batch", e);
        }
        return dropped(e);
    }

    /** Drops the open batch (if any) after {@code e}, so the queue takes the next {@link #start()}; returns e. */
    private <E extends RuntimeException> E dropped(E e) {
        if (started) {
            try {
                driverAbort();
            } catch (RuntimeException abortFailed) {
                e.addSuppressed(abortFailed);
            } finally {
                endBatch();
            }
        }
        return e;
    }

    /** Provider side: a batch begins (remember the producer index to roll back to). */
    protected abstract void driverStart();

    /** Provider side: open a WQE for {@code op}; false if the ring has no room (the batch will be dropped). */
    protected abstract boolean driverOpenWr(WrOpcode op, long wrId, int sendFlags, int imm, int rkey, long remoteAddr,
                                            long compareAdd, long swap);

    /**
     * Provider side: the open WR is a BIND_MW of {@code mw} (opened by {@link #driverOpenWr} with the new rkey); for
     * LOCAL_INV and SEND_WITH_INV, {@code driverOpenWr}'s {@code imm} is the rkey to invalidate.
     */
    protected void driverBindMw(MemoryWindow mw, int rkey, MwBind bind) {
        throw new VerbsException(VerbsException.EOPNOTSUPP, "bindMw: not implemented by this provider");
    }

    protected abstract void driverUdAddr(AddressHandle ah, int remoteQpn, int remoteQkey);

    protected abstract void driverSge(int lkey, long addr, int length);

    protected abstract void driverInline(DirectBuffer src, int offset, int length);

    /**
     * Provider side: a whole plain WR ({@link WrOpcode#isPlain}, RC or UC, at most one SGE, not inline), checked,
     * in one call; false if the ring has no room (the batch will be dropped). The opcode comes as its ordinal
     * ({@code WrOpcode.values()[opOrdinal]}), as the builder keeps it: a provider can look its facts up by it in one
     * load, where the enum and its fields are a chain of dependent loads per WR. {@code hasSge} false: no gather
     * entry. The default opens, adds the SGE and closes, as the segment calls would; a provider overrides it to
     * write the WQE at once.
     */
    protected boolean driverPlainWr(int opOrdinal, long wrId, int sendFlags, int imm, int rkey, long remoteAddr, int lkey,
                                    long addr, int length, boolean hasSge) {
        if (!driverOpenWr(OPCODES[opOrdinal], wrId, sendFlags, imm, rkey, remoteAddr, 0, 0)) {
            return false;
        }
        if (hasSge) {
            driverSge(lkey, addr, length);
        }
        driverCloseWr();
        return true;
    }

    /**
     * Provider side, for a provider that takes the common WR at its first SGE: the WR {@link #driverPlainWr} wrote last
     * gets another SGE, so it becomes the open WR again, its SGE kept: {@link #driverSge} adds to it and
     * {@link #driverCloseWr} closes it. Called only after such a write of this batch, with nothing opened since.
     */
    protected void driverReopenPlainWr() {
        throw new UnsupportedOperationException("this provider takes the common WR when it closes");
    }

    /** Provider side: the open WQE is complete (write its size, advance the producer index). */
    protected abstract void driverCloseWr();

    /** Provider side: make the batch visible to the device with one doorbell. */
    protected abstract void driverComplete();

    /** Provider side: forget every WQE since {@link #driverStart()}. */
    protected abstract void driverAbort();
}
