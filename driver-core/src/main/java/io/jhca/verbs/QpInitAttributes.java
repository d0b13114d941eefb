package io.jhca.verbs;

/** What a QP is created with ({@code struct ibv_qp_init_attr}). Builder style; the defaults are rc_pingpong's. */
public final class QpInitAttributes {
    private final QpType type;
    private final CompletionQueue sendCq;
    private final CompletionQueue recvCq;
    private int maxSendWr = 16;
    private int maxRecvWr = 16;
    private int maxSendSge = 1;
    private int maxRecvSge = 1;
    private int maxInlineData;
    private boolean sqSigAll;
    private boolean singleThreaded;
    private SharedReceiveQueue srq;

    private QpInitAttributes(QpType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        if (sendCq == null || recvCq == null) {
            throw new VerbsException(VerbsException.EINVAL, "create QP: send and receive CQs are required");
        }
        this.type = type;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
    }

    public static QpInitAttributes rc(CompletionQueue sendCq, CompletionQueue recvCq) {
        return new QpInitAttributes(QpType.RC, sendCq, recvCq);
    }

    public static QpInitAttributes uc(CompletionQueue sendCq, CompletionQueue recvCq) {
        return new QpInitAttributes(QpType.UC, sendCq, recvCq);
    }

    public static QpInitAttributes ud(CompletionQueue sendCq, CompletionQueue recvCq) {
        return new QpInitAttributes(QpType.UD, sendCq, recvCq);
    }

    public static QpInitAttributes of(QpType type, CompletionQueue sendCq, CompletionQueue recvCq) {
        return new QpInitAttributes(type, sendCq, recvCq);
    }

    public QpInitAttributes maxSendWr(int n) {
        this.maxSendWr = n;
        return this;
    }

    public QpInitAttributes maxRecvWr(int n) {
        this.maxRecvWr = n;
        return this;
    }

    public QpInitAttributes maxSendSge(int n) {
        this.maxSendSge = n;
        return this;
    }

    public QpInitAttributes maxRecvSge(int n) {
        this.maxRecvSge = n;
        return this;
    }

    public QpInitAttributes maxInlineData(int n) {
        this.maxInlineData = n;
        return this;
    }

    /** Every send WR completes, signaled or not ({@code sq_sig_all}). */
    public QpInitAttributes sqSigAll(boolean all) {
        this.sqSigAll = all;
        return this;
    }

    /**
     * The QP will be used by one thread only (rdma-core: a QP in a thread domain, {@code ibv_alloc_td}): posting
     * takes no lock; each queue belongs to the first thread that posts on it, and any other thread is refused
     * with an {@link IllegalStateException}. Without this the QP may be shared: posts lock (see
     * {@link QueuePair}).
     */
    public QpInitAttributes singleThreaded() {
        this.singleThreaded = true;
        return this;
    }

    public boolean isSingleThreaded() {
        return singleThreaded;
    }

    public QpType type() {
        return type;
    }

    public CompletionQueue sendCq() {
        return sendCq;
    }

    public CompletionQueue recvCq() {
        return recvCq;
    }

    public boolean sqSigAll() {
        return sqSigAll;
    }

    public QpCapabilities capabilities() {
        return new QpCapabilities(maxSendWr, maxRecvWr, maxSendSge, maxRecvSge, maxInlineData);
    }

    private boolean gsi;

    /**
     * The port's general services interface QP (IBTA 16.1: QP1, UD semantics, Q_Key 0x80010000), which carries
     * management datagrams such as the connection manager's. One per device; the kernel's ib_mad owns it in Linux.
     */
    public static QpInitAttributes gsi(CompletionQueue sendCq, CompletionQueue recvCq) {
        QpInitAttributes a = new QpInitAttributes(QpType.UD, sendCq, recvCq);
        a.gsi = true;
        return a;
    }

    /** True for the GSI QP (QPN 1). */
    public boolean isGsi() {
        return gsi;
    }

    /**
     * The QP takes its receives from {@code srq} ({@code ibv_qp_init_attr.srq}): it has no receive queue of its own,
     * so max_recv_wr and max_recv_sge are ignored and posting receives on the QP is refused. RC and UD only.
     */
    public QpInitAttributes srq(SharedReceiveQueue srq) {
        this.srq = srq;
        return this;
    }

    /** The SRQ the QP takes its receives from, or null. */
    public SharedReceiveQueue srq() {
        return srq;
    }

    private boolean blockSelfMcastLoopback;

    /**
     * {@code IBV_QP_CREATE_BLOCK_SELF_MCAST_LB}: a multicast send of this QP is not delivered back to this QP when it
     * is attached to the group (the device's other attached QPs still get theirs).
     */
    public QpInitAttributes blockSelfMulticastLoopback() {
        this.blockSelfMcastLoopback = true;
        return this;
    }

    public boolean isBlockSelfMulticastLoopback() {
        return blockSelfMcastLoopback;
    }
}
