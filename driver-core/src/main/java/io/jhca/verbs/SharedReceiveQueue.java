package io.jhca.verbs;

/**
 * A shared receive queue ({@code struct ibv_srq}): receive WRs posted here are taken by every QP created with
 * {@link QpInitAttributes#srq}, in the order they were posted, each by the first message that needs one. Such a QP
 * has no receive queue of its own.
 *
 * <p>Posting follows the QP receive rules: the whole chain is checked first (a refused chain posts nothing), a full
 * SRQ is a return value. Posting is serialized by a lock (as rdma-core's mlx5 and rxe providers do). The limit
 * (IBTA 11.2.4.4 / {@code ibv_modify_srq(3)}): once armed, the device reports
 * {@link AsyncEvent.Type#SRQ_LIMIT_REACHED} when the number of posted WRs drops below it, once, and disarms it
 * (query then reports 0). A QP of the SRQ that enters the error state reports
 * {@link AsyncEvent.Type#QP_LAST_WQE_REACHED}: it takes no more WRs from the SRQ. Closing is refused while a QP
 * still uses the SRQ.
 */
public abstract class SharedReceiveQueue extends VerbsResource {
    private final ProtectionDomain pd;
    private final int maxSge;
    private final ThreadGuard guard = ThreadGuard.of("shared receive queue", false);
    private int maxWr;
    private int srqn;

    protected SharedReceiveQueue(ProtectionDomain pd, int maxWr, int maxSge) {
        super("SRQ", pd);
        this.pd = pd;
        this.maxWr = maxWr;
        this.maxSge = maxSge;
    }

    /** Provider side: the SRQ number, set once while the SRQ is created. */
    protected final void srqn(int srqn) {
        this.srqn = srqn;
    }

    /** Provider side: the depth actually granted (at least what was asked for). */
    protected final void maxWr(int granted) {
        this.maxWr = granted;
    }

    public final int srqn() {
        return srqn;
    }

    public final ProtectionDomain pd() {
        return pd;
    }

    @Override
    public String describe() {
        return "SRQ " + srqn;
    }

    /** The current attributes ({@code ibv_query_srq}); the limit is 0 once the device reported it. */
    public final synchronized SrqAttributes query() {
        checkOpen();
        return new SrqAttributes(maxWr, maxSge, driverQueryLimit());
    }

    /**
     * Modifies the SRQ ({@code ibv_modify_srq}). {@link SrqAttributes#LIMIT} arms the limit (at most max_wr; 0
     * disarms). {@link SrqAttributes#MAX_WR} (resizing) is refused with EINVAL by providers that do not support it,
     * as rdma-core's mlx5 does.
     */
    public final synchronized void modify(SrqAttributes attr, int attrMask) {
        checkOpen();
        String what = "modify " + describe() + ": ";
        if ((attrMask & ~(SrqAttributes.MAX_WR | SrqAttributes.LIMIT)) != 0) {
            throw new VerbsException(VerbsException.EINVAL, what + "unknown attribute mask bits 0x"
                    + Integer.toHexString(attrMask & ~(SrqAttributes.MAX_WR | SrqAttributes.LIMIT)));
        }
        if ((attrMask & SrqAttributes.MAX_WR) != 0) {
            int max = pd.context().queryDevice().maxSrqWr();
            if (attr.maxWr() < 1 || attr.maxWr() > max) {
                throw new VerbsException(VerbsException.EINVAL, what + "max_wr " + attr.maxWr() + " out of range 1.." + max);
            }
            driverResize(attr.maxWr());
        }
        if ((attrMask & SrqAttributes.LIMIT) != 0) {
            // rxe_srq_chk_attr: a limit above the queue's depth could never be crossed
            if (attr.srqLimit() < 0 || attr.srqLimit() > maxWr) {
                throw new VerbsException(VerbsException.EINVAL, what + "srq_limit " + attr.srqLimit()
                        + " out of range 0.." + maxWr);
            }
            driverArmLimit(attr.srqLimit());
        }
    }

    /**
     * Posts a chain of receive WRs ({@code ibv_post_srq_recv}); returns how many were posted (fewer: the SRQ is full).
     * The whole chain is checked first: a refused chain posts nothing.
     */
    public final int postRecv(RecvWr wr) {
        checkOpen();
        RecvWr.checkChain(wr, this, maxSge, "max_sge");   // the application's WRs and final limits: no lock needed
        return driverPostRecvChain(wr);
    }

    /**
     * Provider side: queues the checked chain's WRs in order until the SRQ is full, makes them visible and returns
     * how many it queued, serializing concurrent posters. The default takes a lock for the chain, then each WR with
     * {@link #driverPostRecv} and rings once; a provider whose ring has a lock of its own (taken by its completions
     * too) overrides it to take only that lock, once per chain, as rdma-core's mlx5 does.
     */
    protected int driverPostRecvChain(RecvWr wr) {
        guard.enter(this);
        try {
            int posted = 0;
            for (RecvWr w = wr; w != null; w = w.next()) {
                if (!driverPostRecv(w)) {
                    break;
                }
                posted++;
            }
            if (posted > 0) {
                driverRingDoorbell();
            }
            return posted;
        } finally {
            guard.exit();
        }
    }

    /**
     * Provider side, for the default {@link #driverPostRecvChain}: queue one checked receive WR; false if the SRQ is
     * full. A provider that overrides the chain need not implement it.
     */
    protected boolean driverPostRecv(RecvWr wr) {
        throw new UnsupportedOperationException(describe() + ": the provider posts whole chains");
    }

    /** Provider side, for the default {@link #driverPostRecvChain}: tell the device about the WRs just queued. */
    protected void driverRingDoorbell() {
        throw new UnsupportedOperationException(describe() + ": the provider posts whole chains");
    }

    /** Provider side: arm (limit &gt; 0) or disarm (0) the limit; {@code limit} is within 0..max_wr. */
    protected abstract void driverArmLimit(int limit);

    /** Provider side: the limit armed now (0 once the limit event was reported). */
    protected abstract int driverQueryLimit();

    /** Provider side: resize to at least {@code maxWr} WRs; refuse with EINVAL if the provider cannot. */
    protected void driverResize(int maxWr) {
        throw new VerbsException(VerbsException.EINVAL, "modify " + describe() + ": resizing an SRQ (max_wr) is not "
                + "supported by this provider");
    }
}
