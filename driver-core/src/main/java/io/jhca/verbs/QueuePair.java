package io.jhca.verbs;

/**
 * A queue pair ({@code struct ibv_qp}). The state machine, the attribute masks, capability limits and
 * work-request checks are enforced here for every provider; providers implement the {@code driver*} methods.
 *
 * <p>Threading, as rdma-core: by default a QP may be shared between threads. Posting sends (postSend and the
 * {@link SendQueue} builder's whole start..complete batch) is serialized by the send queue's lock, posting
 * receives by the receive queue's lock; each is one uncontended lock on the fast path, and the two sides do not
 * wait for each other. A QP created with {@link QpInitAttributes#singleThreaded()} has no locks: each of its
 * queues belongs to the first thread that posts on it, and a post from any other thread is refused with an
 * {@link IllegalStateException} naming the QP and both threads (the ring is never touched). {@link #modify},
 * {@link #query} and {@link #close()} may come from any thread; close a QP only once no thread posts on it
 * (a post racing the close fails with an exception).
 *
 * <p>A full queue is a return value (fewer WRs posted than given), never an exception; a malformed WR or a QP
 * in the wrong state is refused with a {@link VerbsException} naming the problem, and nothing of its chain is
 * posted.
 */
public abstract class QueuePair extends VerbsResource {
    private final ProtectionDomain pd;
    private final QpType type;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private final boolean sqSigAll;
    private final QpAttributes current = new QpAttributes();
    private QpCapabilities caps;
    private int qpn;
    private volatile QpState state = QpState.RESET;
    /** The port's max_msg_sz (ibv_port_attr), the longest message a WR may carry; follows the QP's port. */
    private volatile long maxMsgSize;
    private final ThreadGuard sendGuard;
    private final ThreadGuard recvGuard;
    private final SharedReceiveQueue srq;

    protected QueuePair(ProtectionDomain pd, QpInitAttributes init, QpCapabilities caps) {
        super("QP", uses(pd, init));
        this.pd = pd;
        this.maxMsgSize = pd.context().queryPort(1).maxMsgSz();
        this.sendGuard = ThreadGuard.of("send queue", init.isSingleThreaded());
        this.recvGuard = ThreadGuard.of("receive queue", init.isSingleThreaded());
        this.type = init.type();
        this.sendCq = init.sendCq();
        this.recvCq = init.recvCq();
        this.sqSigAll = init.sqSigAll();
        this.caps = caps;
        this.srq = init.srq();
    }

    /** What a QP depends on: its PD, its CQs and its SRQ (which refuses to close while a QP takes receives from it). */
    private static VerbsResource[] uses(ProtectionDomain pd, QpInitAttributes init) {
        return init.srq() == null ? new VerbsResource[] {pd, init.sendCq(), init.recvCq()}
                : new VerbsResource[] {pd, init.sendCq(), init.recvCq(), init.srq()};
    }

    /** The SRQ this QP takes its receives from, or null if it has a receive queue of its own. */
    public final SharedReceiveQueue srq() {
        return srq;
    }

    /** Provider side: the QP number, set once while the QP is created. */
    protected final void qpn(int qpn) {
        this.qpn = qpn;
    }

    /** Provider side: the capabilities actually granted (at least those asked for). */
    protected final void capabilities(QpCapabilities granted) {
        this.caps = granted;
    }

    public final int qpn() {
        return qpn;
    }

    public final QpType type() {
        return type;
    }

    public final ProtectionDomain pd() {
        return pd;
    }

    public final CompletionQueue sendCq() {
        return sendCq;
    }

    public final CompletionQueue recvCq() {
        return recvCq;
    }

    public final boolean sqSigAll() {
        return sqSigAll;
    }

    public final QpCapabilities capabilities() {
        return caps;
    }

    public final QpState state() {
        return state;
    }

    /** True if this QP was created {@link QpInitAttributes#singleThreaded() single-threaded} (no locks). */
    public final boolean singleThreaded() {
        return sendGuard.singleThreaded();
    }

    /** The longest message one WR may carry: the port's {@code max_msg_sz}. */
    public final long maxMessageSize() {
        return maxMsgSize;
    }

    final ThreadGuard sendGuard() {
        return sendGuard;
    }

    @Override
    public String describe() {
        return String.format("QP 0x%06x", qpn);
    }

    /**
     * This QP's counters, as {@code rdma statistic qp show} lists them: name to value, in the provider's order. A
     * snapshot; empty if the provider keeps none per QP.
     */
    public java.util.Map<String, Long> statistics() {
        return java.util.Collections.emptyMap();
    }

    /** The current attributes (a copy), as {@code ibv_query_qp} with every mask bit. */
    public final synchronized QpAttributes query() {
        QpAttributes q = current.copy();
        q.state(state);
        return q;
    }

    /**
     * Modifies the QP ({@code ibv_modify_qp}). Illegal transitions, missing or forbidden attributes and values
     * out of range are refused with EINVAL and a message naming them; the QP is then unchanged.
     */
    public final synchronized void modify(QpAttributes attr) {
        checkOpen();
        QpState cur = state;
        if (attr.has(QpAttrMask.CUR_STATE) && attr.curState() != cur
                && !(attr.curState() == QpState.SQE && cur == QpState.SQE)) {
            // libibverbs passes cur_state through; the kernel trusts it only for RTS/SQE/SQD transitions.
            throw new VerbsException(VerbsException.EINVAL, "modify " + describe() + ": cur_state " + attr.curState()
                    + " does not match the QP's state " + cur);
        }
        QpState next = attr.has(QpAttrMask.STATE) ? attr.state() : cur;
        QpTransitions.check(type, cur, next, attr.mask());
        checkRanges(attr);
        driverModify(attr, cur, next);
        if (next == QpState.RESET) {
            current.merge(new QpAttributes().state(QpState.RESET));
        }
        current.merge(attr);
        state = next;
        if (attr.has(QpAttrMask.PORT)) {
            maxMsgSize = pd.context().queryPort(attr.port()).maxMsgSz();
        }
    }

    private void checkRanges(QpAttributes a) {
        Context ctx = pd.context();
        DeviceAttributes dev = ctx.queryDevice();
        String what = "modify " + describe() + ": ";
        if (a.has(QpAttrMask.PORT) && (a.port() < 1 || a.port() > dev.physPortCnt())) {
            throw new VerbsException(VerbsException.EINVAL, what + "port " + a.port() + " out of range 1.." + dev.physPortCnt());
        }
        if (a.has(QpAttrMask.PKEY_INDEX) && (a.pkeyIndex() < 0 || a.pkeyIndex() >= dev.maxPkeys())) {
            throw new VerbsException(VerbsException.EINVAL, what + "pkey_index " + a.pkeyIndex() + " out of range 0.." + (dev.maxPkeys() - 1));
        }
        if (a.has(QpAttrMask.ACCESS_FLAGS) && (a.accessFlags() & ~Access.ALL) != 0) {
            throw new VerbsException(VerbsException.EINVAL, what + "unknown access bits 0x" + Integer.toHexString(a.accessFlags()));
        }
        int port = a.has(QpAttrMask.PORT) ? a.port() : current.port();
        if (a.has(QpAttrMask.PATH_MTU)) {
            Mtu max = ctx.queryPort(port).maxMtu();
            if (a.pathMtu().bytes() > max.bytes()) {
                throw new VerbsException(VerbsException.EINVAL, what + "path_mtu " + a.pathMtu().bytes() + " exceeds the port's max MTU " + max.bytes());
            }
        }
        if (a.has(QpAttrMask.AV)) {
            if (a.ah() == null) {
                throw new VerbsException(VerbsException.EINVAL, what + "AV bit set without an address vector");
            }
            a.ah().validate(ctx);
        }
        range(what, a, QpAttrMask.TIMEOUT, "timeout", a.timeout(), 31);
        range(what, a, QpAttrMask.RETRY_CNT, "retry_cnt", a.retryCnt(), 7);
        range(what, a, QpAttrMask.RNR_RETRY, "rnr_retry", a.rnrRetry(), 7);
        range(what, a, QpAttrMask.MIN_RNR_TIMER, "min_rnr_timer", a.minRnrTimer(), 31);
        range(what, a, QpAttrMask.RQ_PSN, "rq_psn", a.rqPsn(), 0xFFFFFF);
        range(what, a, QpAttrMask.SQ_PSN, "sq_psn", a.sqPsn(), 0xFFFFFF);
        range(what, a, QpAttrMask.DEST_QPN, "dest_qp_num", a.destQpn(), 0xFFFFFF);
        range(what, a, QpAttrMask.MAX_QP_RD_ATOMIC, "max_rd_atomic", a.maxRdAtomic(), dev.maxQpInitRdAtom());
        range(what, a, QpAttrMask.MAX_DEST_RD_ATOMIC, "max_dest_rd_atomic", a.maxDestRdAtomic(), dev.maxQpRdAtom());
    }

    private static void range(String what, QpAttributes a, int bit, String name, int value, int max) {
        if (a.has(bit) && (value < 0 || value > max)) {
            throw new VerbsException(VerbsException.EINVAL, what + name + " " + value + " out of range 0.." + max);
        }
    }

    /** The attributes the QP holds now (not a copy: providers read, never write). */
    protected final QpAttributes currentAttributes() {
        return current;
    }

    /**
     * Provider side: the QP moved to the error state by itself (an error completion, a fatal event). Work
     * still queued must be flushed with {@link WcStatus#WR_FLUSH_ERR} by the provider.
     */
    protected final void enterError() {
        state = QpState.ERR;
    }

    /** Provider side: move to SQE (a UD/UC send error stops only the send queue). */
    protected final void enterSqError() {
        state = QpState.SQE;
    }

    /**
     * Posts a chain of send WRs ({@code ibv_post_send}). Returns how many were posted: fewer than the chain
     * holds means the send queue is full. The whole chain is checked before any of it is queued, so a refused
     * chain posts nothing. The WRs are copied; they may be reused at once.
     */
    public final int postSend(SendWr wr) {
        sendGuard.enter(this);
        try {
            checkOpen();
            checkCanPostSend();
            if (sendGuard.lockHeldTwice()) {
                throw new VerbsException(VerbsException.EINVAL, "post send on " + describe()
                        + " while this thread has a send builder batch open (complete() or abort() it first)");
            }
            long maxMsg = maxMsgSize; // one volatile read per chain
            int refuse = refusedShapes();
            if (wr.next() != null && caps.maxSendSge() >= 1) {   // one WR: the walk below is faster
                int written = driverPostCommonChain(wr, Math.min(maxMsg, Integer.MAX_VALUE), refuse);
                if (written >= 0) {
                    if (written > 0) {
                        driverRingSendDoorbell();
                    }
                    return written;
                }
            }
            boolean commonOnly = true;   // every WR of the chain the common one, with at most one SGE
            int n = 0;
            for (SendWr w = wr; w != null; w = w.next()) {
                if (plainSendWr(w, maxMsg, refuse)) {
                    commonOnly &= w.numSge() <= 1;
                } else {
                    checkSendWrFully(w);
                    commonOnly = false;
                }
                n++;
            }
            driverBeginPostSend();
            int posted = commonOnly ? driverPostCommonSends(wr, n) : postEach(wr);
            if (posted > 0) {
                driverRingSendDoorbell();
            }
            return posted;
        } catch (RuntimeException e) {
            throw postFailed(e, "post send");
        } finally {
            sendGuard.exit();
        }
    }

    /**
     * Posts a chain of receive WRs ({@code ibv_post_recv}); returns how many were posted (fewer: queue full).
     * The whole chain is checked first: a refused chain posts nothing.
     */
    public final int postRecv(RecvWr wr) {
        recvGuard.enter(this);
        try {
            checkOpen();
            if (srq != null) {
                // rxe post_recv, mlx5: a QP attached to an SRQ has no receive queue
                throw new VerbsException(VerbsException.EINVAL, "post recv on " + describe() + ": the QP takes its receives from "
                        + srq.describe() + "; post them there");
            }
            if (state == QpState.RESET) {
                throw new VerbsException(VerbsException.EINVAL, "post recv on " + describe() + " in state RESET (needs INIT or later)");
            }
            RecvWr.checkChain(wr, this, caps.maxRecvSge(), "max_recv_sge");
            driverBeginPostRecv();
            int posted = 0;
            for (RecvWr w = wr; w != null; w = w.next()) {
                if (!driverPostRecv(w)) {
                    break;
                }
                posted++;
            }
            if (posted > 0) {
                driverRingRecvDoorbell();
            }
            return posted;
        } catch (RuntimeException e) {
            throw postFailed(e, "post recv");
        } finally {
            recvGuard.exit();
        }
    }

    /**
     * An error while posting: if this QP was closed meanwhile (another thread's close racing the post, which the checks
     * at the post's start did not see), the error says so, with the provider's as its cause (a write into the closed
     * ring's memory, which its bounds check refuses).
     */
    private RuntimeException postFailed(RuntimeException e, String post) {
        if (closedUnder(e)) {
            return new VerbsException(VerbsException.EINVAL, post + " on " + describe() + ": closed during the post", e);
        }
        return e;
    }

    /** Throws unless sends may be posted now: RTS, SQD, SQE queue; ERR flushes; RESET, INIT, RTR refuse. */
    protected final void checkCanPostSend() {
        QpState s = state;
        if (s == QpState.RESET || s == QpState.INIT || s == QpState.RTR) {
            throw new VerbsException(VerbsException.EINVAL, "post send on " + describe() + " in state " + s + " (needs RTS)");
        }
    }

    /**
     * Whether {@code w} is the common WR, which passes every check of {@link #checkSendWrFully}: a SEND or RDMA WRITE
     * (with or without immediate), or an RDMA READ on RC, on an RC or UC QP, without INLINE or unknown flags, within
     * max_send_sge and the message size. Kept small (the full check, with its messages, is over the JIT's inlining
     * limit of 325 bytecodes), so that the posting loop inlines it; any other WR takes the full check. Opcode and flags
     * are tested as the bits their setters keep ({@code SendWr.shape}) against {@link #refusedShapes}: one field and one
     * mask per WR where the opcode's own facts were a second load (B/A 0.989 / 0.925 / 0.921 at batch 1/8/32).
     */
    private boolean plainSendWr(SendWr w, long maxMsg, int refuse) {
        if ((w.shape() & refuse) != 0 || w.numSge() > caps.maxSendSge()) {
            return false;
        }
        long total = w.totalLength();
        return total <= maxMsg && total <= Integer.MAX_VALUE;
    }

    /**
     * Whether {@code w} is the common WR with at most one SGE, as {@link #driverPostCommonChain} must test each WR of
     * its chain: what {@link #plainSendWr} accepts, for a QP whose max_send_sge is at least 1.
     *
     * @param maxLength the port's max_msg_sz, at most 2^31-1 (the largest length a 32-bit field carries)
     * @param refuse    the {@code SendWr.shape} bits this QP does not take as common
     */
    protected static boolean commonSendWr(SendWr w, long maxLength, int refuse) {
        int n = w.numSge();
        return (w.shape() & refuse) == 0 && (n == 0 || n == 1 && (w.firstSge().length() & 0xFFFFFFFFL) <= maxLength);
    }

    /** The {@code SendWr.shape} bits that make a WR of this QP not the common one: every WR on UD, a READ on UC. */
    private int refusedShapes() {
        QpType t = type;
        if (t == QpType.RC) {
            return SendWr.UNCOMMON_OPCODE | SendWr.UNCOMMON_FLAGS;
        }
        return t == QpType.UC ? SendWr.UNCOMMON_OPCODE | SendWr.UNCOMMON_FLAGS | SendWr.READ : SendWr.ANY;
    }

    private void checkSendWrFully(SendWr w) {
        WrOpcode op = w.opcode();
        if (type == QpType.UD && op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM) {
            throw new VerbsException(VerbsException.EINVAL, "post send on UD " + describe() + ": opcode " + op + " is not supported on UD");
        }
        if (type == QpType.UC && (op == WrOpcode.RDMA_READ || op.isAtomic())) {
            throw new VerbsException(VerbsException.EINVAL, "post send on UC " + describe() + ": opcode " + op + " is not supported on UC");
        }
        if ((w.sendFlags() & ~SendFlags.ALL) != 0) {
            throw new VerbsException(VerbsException.EINVAL, "post send: unknown send flags 0x" + Integer.toHexString(w.sendFlags()));
        }
        if (op.isLocal() || op == WrOpcode.SEND_WITH_INV) {
            checkMwWr(w, op);
        }
        long total = w.totalLength();
        if ((w.sendFlags() & SendFlags.INLINE) != 0) {
            if (op == WrOpcode.RDMA_READ || op.isAtomic()) {
                throw new VerbsException(VerbsException.EINVAL, "post send: INLINE is not allowed with " + op);
            }
            if (total > caps.maxInlineData()) {
                throw new VerbsException(VerbsException.EINVAL, "post send on " + describe() + ": inline data of " + total
                        + " bytes exceeds max_inline_data " + caps.maxInlineData());
            }
        } else if (w.numSge() > caps.maxSendSge()) {
            throw new VerbsException(VerbsException.EINVAL, "post send on " + describe() + ": " + w.numSge()
                    + " SGEs exceed max_send_sge " + caps.maxSendSge());
        }
        if (total > maxMsgSize || total > Integer.MAX_VALUE) {
            throw messageTooLong("post send on " + describe(), total);
        }
        if (op.isAtomic()) {
            if (w.numSge() != 1 || w.sge(0).length() != 8) {
                throw new VerbsException(VerbsException.EINVAL, "post send: " + op + " needs exactly one 8-byte SGE");
            }
            if ((w.remoteAddr() & 7) != 0) {
                throw new VerbsException(VerbsException.EINVAL, "post send: " + op + " remote address 0x"
                        + Long.toHexString(w.remoteAddr()) + " is not 8-byte aligned");
            }
        }
        if (type == QpType.UD) {
            AddressHandle ah = w.ah();
            if (ah == null || ah.isClosed()) {
                throw new VerbsException(VerbsException.EINVAL, "post send on UD " + describe() + ": no (open) address handle");
            }
            if (ah.pd() != pd) {
                throw new VerbsException(VerbsException.EINVAL, "post send on UD " + describe() + ": address handle of another PD");
            }
        }
    }

    /**
     * Binds a type 1 memory window ({@code ibv_bind_mw}): posts a bind WR with the window's next rkey
     * ({@link MemoryWindow#incRkey}) and returns that key, which {@link MemoryWindow#rkey()} holds from now on.
     * A null MR with address and length 0 unbinds the window. The bind completes with {@link WcOpcode#BIND_MW}
     * (if signaled); a bind the device refuses (MR without MW_BIND, access beyond what the MR allows, a span outside
     * it) completes with {@link WcStatus#MW_BIND_ERR} and moves the QP to ERR. A full send queue is ENOMEM.
     */
    public final int bindMw(MemoryWindow mw, MwBind bind, long wrId, int sendFlags) {
        if (bind == null) {
            throw new VerbsException(VerbsException.EINVAL, "bind MW on " + describe() + ": no bind information");
        }
        MwRules.checkPost(this, mw, bind, MwType.TYPE_1);
        int rkey = MemoryWindow.incRkey(mw.rkey());
        SendWr wr = new SendWr(0).wrId(wrId).opcode(WrOpcode.BIND_MW).sendFlags(sendFlags).bindMw(mw, rkey, bind);
        if (postSend(wr) != 1) {
            throw new VerbsException(VerbsException.ENOMEM, "bind MW on " + describe() + ": send queue full");
        }
        mw.rkey(rkey);
        return rkey;
    }

    private void checkMwWr(SendWr w, WrOpcode op) {
        if (type != QpType.RC && !(type == QpType.UC && op != WrOpcode.SEND_WITH_INV)) {
            throw new VerbsException(VerbsException.EINVAL, "post send on " + type + " " + describe() + ": opcode "
                    + op + " is not supported on " + type);
        }
        if (op == WrOpcode.BIND_MW) {
            // a type 1 window may be bound by a BIND_MW WR too: that is what ibv_bind_mw posts
            MemoryWindow mw = w.mw();
            MwRules.checkPost(this, mw, w.bindInfo(), mw == null ? MwType.TYPE_2 : mw.type());
            if ((w.bindRkey() & 0xFFFFFF00) != (mw.rkey() & 0xFFFFFF00)) {
                throw new VerbsException(VerbsException.EINVAL, "post send BIND_MW on " + describe() + ": rkey 0x"
                        + Integer.toHexString(w.bindRkey()) + " is not of " + mw.describe()
                        + " (only the low 8 bits, the key, may change)");
            }
        } else if (!pd.context().queryDevice().supports(MwType.TYPE_2)) {
            throw new VerbsException(VerbsException.EOPNOTSUPP, "post send on " + describe() + ": "
                    + pd.context().describe() + " does not support " + op + " (no type 2 memory windows)");
        }
        if (op.isLocal() && w.numSge() != 0) {
            throw new VerbsException(VerbsException.EINVAL, "post send " + op + " on " + describe() + ": takes no SGEs");
        }
    }

    /**
     * The refusal of a message longer than the port's max_msg_sz (IBTA: at most 2^31 bytes) or than 2^31-1 bytes, what
     * the providers' 32-bit length fields carry.
     */
    final VerbsException messageTooLong(String what, long total) {
        if (total > maxMsgSize) {
            return new VerbsException(VerbsException.EINVAL, what + ": message of " + total
                    + " bytes exceeds the port's max_msg_sz " + maxMsgSize);
        }
        return new VerbsException(VerbsException.EINVAL, what + ": SGE lengths add up to more than 2^31-1");
    }

    /** The send builder (rdma-core's {@code ibv_wr_*} style): writes WQEs in place, one doorbell per batch. */
    public abstract SendQueue sendQueue();

    /** Provider side: carry out a checked transition (flush on ERR, reset queues on RESET, ...). */
    protected abstract void driverModify(QpAttributes attr, QpState current, QpState next);

    /** Provider side: queue one checked send WR; false if the send queue is full. */
    protected abstract boolean driverPostSend(SendWr wr);

    /**
     * Provider side: queue one send WR of a chain made only of the common WR, as checked: a SEND or RDMA WRITE (with
     * or without immediate) or an RDMA READ on RC, on an RC or UC QP, of at most one SGE, no flag but FENCE, SIGNALED
     * and SOLICITED, within the message size. A provider can skip its own tests for those; false if the send queue
     * is full. The default is {@link #driverPostSend}.
     */
    protected boolean driverPostCommonSend(SendWr wr) {
        return driverPostSend(wr);
    }

    /**
     * Provider side: queue a checked chain of {@code n} common WRs ({@link #driverPostCommonSend}), in
     * order, until the send queue is full; returns how many were queued. A provider that overrides this can learn
     * the queue's room once for the chain instead of per WR. The default calls {@link #driverPostCommonSend} per WR.
     */
    protected int driverPostCommonSends(SendWr first, int n) {
        int posted = 0;
        for (SendWr w = first; w != null && driverPostCommonSend(w); w = w.next()) {
            posted++;
        }
        return posted;
    }

    /**
     * Provider side: checks and queues a chain of two or more WRs in one walk, if every WR of it is the common one
     * ({@link #commonSendWr}); returns how many were queued (fewer than the chain: the send queue is full), or -1 when
     * it queued nothing and {@link #postSend} is to check and post the chain as before: its check walk, then WR by WR.
     * A separate check walk waits once more on every WR's {@code next} pointer, a load that depends on the load before
     * it: on some hosts that walk took a quarter of a chain of 32. A provider that queues WRs before it has seen the
     * whole chain takes them back when it finds an uncommon WR, so that a refused chain posts nothing, and when the
     * queue fills it still tests the rest of the chain. Called before {@link #driverBeginPostSend}: a provider makes
     * that check itself and returns -1 when it fails, so the refusals and their order stay the walk's. The default
     * returns -1.
     *
     * @param maxLength the port's max_msg_sz, at most 2^31-1
     * @param refuse    the {@code SendWr.shape} bits this QP does not take as common
     */
    protected int driverPostCommonChain(SendWr first, long maxLength, int refuse) {
        return -1;
    }

    private int postEach(SendWr first) {
        int posted = 0;
        for (SendWr w = first; w != null && driverPostSend(w); w = w.next()) {
            posted++;
        }
        return posted;
    }

    /**
     * Called once per {@link #postSend} chain, after its checks and before its first {@link #driverPostSend}: where a
     * provider checks what holds for the whole chain (a device still alive) once instead of per WR.
     */
    protected void driverBeginPostSend() {
    }

    /** Provider side: tell the device about the WRs just queued (one doorbell for the chain). */
    protected abstract void driverRingSendDoorbell();

    /** As {@link #driverBeginPostSend}, for a {@link #postRecv} chain. */
    protected void driverBeginPostRecv() {
    }

    /** Provider side: queue one checked receive WR; false if the receive queue is full. */
    protected abstract boolean driverPostRecv(RecvWr wr);

    /** Provider side: tell the device about the receive WRs just queued. */
    protected abstract void driverRingRecvDoorbell();
    // ------------------------------------------------------------------------------------------ multicast

    /** The destination QPN of a UD send to a multicast group (IBTA 10.5.2.1; rxe IB_MULTICAST_QPN). */
    public static final int MULTICAST_QPN = 0xFFFFFF;

    /** The groups this QP is attached to (guarded by this). */
    private final java.util.Set<Gid> mcastGroups = new java.util.LinkedHashSet<>();

    /**
     * Attaches this UD QP to a multicast group ({@code ibv_attach_mcast}): from now on it receives a copy of every
     * UD send to {@code mgid} that reaches the device. Refused with EINVAL for a GID that is not multicast or a QP
     * that is not UD (ib_attach_mcast); attaching twice is no error (rxe). {@code mlid} is the group's LID, a
     * 16-bit value that RoCE ignores. Beyond the device's max_mcast_grp or max_mcast_qp_attach: ENOMEM.
     */
    public final synchronized void attachMcast(Gid mgid, int mlid) {
        checkMcast("attach", mgid, mlid);
        if (mcastGroups.contains(mgid)) {
            return;
        }
        driverAttachMcast(mgid, mlid);
        mcastGroups.add(mgid);
    }

    /**
     * Detaches this QP from a group ({@code ibv_detach_mcast}): it receives no more of the group's sends. A group
     * the QP is not attached to is refused with EINVAL (rxe_detach_mcast); the device leaves the group with its
     * last member.
     */
    public final synchronized void detachMcast(Gid mgid, int mlid) {
        checkMcast("detach", mgid, mlid);
        if (!mcastGroups.contains(mgid)) {
            throw new VerbsException(VerbsException.EINVAL, "detach " + describe() + " from " + mgid
                    + ": the QP is not attached to this group");
        }
        driverDetachMcast(mgid, mlid);
        mcastGroups.remove(mgid);
    }

    /** The multicast groups this QP is attached to now (a copy). */
    public final synchronized java.util.Set<Gid> multicastGroups() {
        return new java.util.LinkedHashSet<>(mcastGroups);
    }

    private void checkMcast(String what, Gid mgid, int mlid) {
        checkOpen();
        if (mgid == null || !mgid.isMulticast()) {
            throw new VerbsException(VerbsException.EINVAL, what + " " + describe() + ": " + mgid
                    + " is not a multicast GID (::ffff:224.0.0.0/100 or ff00::/8)");
        }
        if (type != QpType.UD) {
            throw new VerbsException(VerbsException.EINVAL, what + " " + describe() + ": only UD QPs join multicast"
                    + " groups, this one is " + type);
        }
        if (mlid < 0 || mlid > 0xFFFF) {
            throw new VerbsException(VerbsException.EINVAL, what + " " + describe() + ": mlid " + mlid
                    + " out of range 0..0xffff");
        }
    }

    /** ibv_destroy_qp refuses a QP still attached to a group (uverbs_free_qp: EBUSY). */
    @Override
    void beforeDestroy() {
        synchronized (this) {
            if (!mcastGroups.isEmpty()) {
                throw new VerbsException(VerbsException.EBUSY, "cannot close " + describe() + ": still attached to "
                        + mcastGroups.size() + " multicast group(s) " + mcastGroups + "; detach first");
            }
        }
    }

    /** Provider side: attach to a checked, new group; throw (ENOMEM at a limit) to refuse. */
    protected void driverAttachMcast(Gid mgid, int mlid) {
        throw new VerbsException(VerbsException.EOPNOTSUPP, "attach " + describe() + ": the provider has no multicast");
    }

    /** Provider side: detach from a group the QP is attached to. */
    protected void driverDetachMcast(Gid mgid, int mlid) {
        throw new VerbsException(VerbsException.EOPNOTSUPP, "detach " + describe() + ": the provider has no multicast");
    }
}
