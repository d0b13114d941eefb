package io.jhca.verbs;

/**
 * QP attributes for {@link QueuePair#modify} ({@code struct ibv_qp_attr} with its mask): every setter sets
 * the field and its {@link QpAttrMask} bit, so the mask always says exactly what was given.
 * The factories build the usual transitions with the values rdma-core's rc_pingpong and perftest use.
 */
public final class QpAttributes {
    private int mask;
    private QpState state = QpState.RESET;
    private QpState curState = QpState.RESET;
    private int accessFlags;
    private int pkeyIndex;
    private int port = 1;
    private int qkey;
    private AhAttributes ah;
    private Mtu pathMtu = Mtu.MTU_256;
    private int timeout;
    private int retryCnt;
    private int rnrRetry;
    private int rqPsn;
    private int sqPsn;
    private int maxRdAtomic;
    private int maxDestRdAtomic;
    private int minRnrTimer;
    private int destQpn;
    private boolean sqDrainedNotify;

    /** RESET to INIT for RC/UC: P_Key index 0, the given port and remote access flags. */
    public static QpAttributes toInit(int port, Access... access) {
        return new QpAttributes().state(QpState.INIT).pkeyIndex(0).port(port).accessFlags(Access.mask(access));
    }

    /** RESET to INIT for UD: P_Key index 0, the port and the Q_Key. */
    public static QpAttributes toInitUd(int port, int qkey) {
        return new QpAttributes().state(QpState.INIT).pkeyIndex(0).port(port).qkey(qkey);
    }

    /**
     * INIT to RTR for RC/UC with rc_pingpong's defaults: max_dest_rd_atomic 1, min_rnr_timer 12 (0.64 ms).
     * For UC the two RC-only attributes are dropped.
     */
    public static QpAttributes toRtr(int destQpn, int rqPsn, AhAttributes av, Mtu mtu) {
        return new QpAttributes().state(QpState.RTR).destQpn(destQpn).rqPsn(rqPsn).ah(av).pathMtu(mtu)
                .maxDestRdAtomic(1).minRnrTimer(12);
    }

    /** RTR to RTS for RC with rc_pingpong's defaults: timeout 14 (67 ms), retry_cnt 7, rnr_retry 7, max_rd_atomic 1. */
    public static QpAttributes toRts(int sqPsn) {
        return new QpAttributes().state(QpState.RTS).sqPsn(sqPsn).timeout(14).retryCnt(7).rnrRetry(7).maxRdAtomic(1);
    }

    /** INIT to RTR for UD (only the state). */
    public static QpAttributes toRtrUd() {
        return new QpAttributes().state(QpState.RTR);
    }

    /** RTR to RTS for UD or UC (only the state and the send PSN). */
    public static QpAttributes toRtsUd(int sqPsn) {
        return new QpAttributes().state(QpState.RTS).sqPsn(sqPsn);
    }

    public static QpAttributes toState(QpState s) {
        return new QpAttributes().state(s);
    }

    /** Removes attribute bits from the mask (e.g. the RC-only ones of {@link #toRtr} for a UC QP). */
    public QpAttributes without(int bits) {
        mask &= ~bits;
        return this;
    }

    public QpAttributes state(QpState s) {
        state = s;
        mask |= QpAttrMask.STATE;
        return this;
    }

    /** Asserts the current state, as {@code IBV_QP_CUR_STATE} does. */
    public QpAttributes curState(QpState s) {
        curState = s;
        mask |= QpAttrMask.CUR_STATE;
        return this;
    }

    public QpAttributes accessFlags(int flags) {
        accessFlags = flags;
        mask |= QpAttrMask.ACCESS_FLAGS;
        return this;
    }

    public QpAttributes pkeyIndex(int index) {
        pkeyIndex = index;
        mask |= QpAttrMask.PKEY_INDEX;
        return this;
    }

    public QpAttributes port(int p) {
        port = p;
        mask |= QpAttrMask.PORT;
        return this;
    }

    public QpAttributes qkey(int k) {
        qkey = k;
        mask |= QpAttrMask.QKEY;
        return this;
    }

    public QpAttributes ah(AhAttributes av) {
        ah = av;
        mask |= QpAttrMask.AV;
        return this;
    }

    public QpAttributes pathMtu(Mtu m) {
        pathMtu = m;
        mask |= QpAttrMask.PATH_MTU;
        return this;
    }

    /** Local ACK timeout: 4.096 us * 2^timeout; 0 means wait forever. */
    public QpAttributes timeout(int t) {
        timeout = t;
        mask |= QpAttrMask.TIMEOUT;
        return this;
    }

    public QpAttributes retryCnt(int n) {
        retryCnt = n;
        mask |= QpAttrMask.RETRY_CNT;
        return this;
    }

    /** RNR retries; 7 means retry forever (IBTA). */
    public QpAttributes rnrRetry(int n) {
        rnrRetry = n;
        mask |= QpAttrMask.RNR_RETRY;
        return this;
    }

    public QpAttributes rqPsn(int psn) {
        rqPsn = psn;
        mask |= QpAttrMask.RQ_PSN;
        return this;
    }

    public QpAttributes sqPsn(int psn) {
        sqPsn = psn;
        mask |= QpAttrMask.SQ_PSN;
        return this;
    }

    /** Outstanding RDMA READs/atomics this QP may issue. */
    public QpAttributes maxRdAtomic(int n) {
        maxRdAtomic = n;
        mask |= QpAttrMask.MAX_QP_RD_ATOMIC;
        return this;
    }

    /** Outstanding RDMA READs/atomics this QP accepts as responder. */
    public QpAttributes maxDestRdAtomic(int n) {
        maxDestRdAtomic = n;
        mask |= QpAttrMask.MAX_DEST_RD_ATOMIC;
        return this;
    }

    /** RNR NAK timer code (0..31) this QP's responder sends. */
    public QpAttributes minRnrTimer(int code) {
        minRnrTimer = code;
        mask |= QpAttrMask.MIN_RNR_TIMER;
        return this;
    }

    public QpAttributes destQpn(int qpn) {
        destQpn = qpn;
        mask |= QpAttrMask.DEST_QPN;
        return this;
    }

    public QpAttributes sqDrainedNotify(boolean on) {
        sqDrainedNotify = on;
        mask |= QpAttrMask.EN_SQD_ASYNC_NOTIFY;
        return this;
    }

    public int mask() {
        return mask;
    }

    public boolean has(int bit) {
        return (mask & bit) != 0;
    }

    public QpState state() {
        return state;
    }

    public QpState curState() {
        return curState;
    }

    public int accessFlags() {
        return accessFlags;
    }

    public int pkeyIndex() {
        return pkeyIndex;
    }

    public int port() {
        return port;
    }

    public int qkey() {
        return qkey;
    }

    public AhAttributes ah() {
        return ah;
    }

    public Mtu pathMtu() {
        return pathMtu;
    }

    public int timeout() {
        return timeout;
    }

    public int retryCnt() {
        return retryCnt;
    }

    public int rnrRetry() {
        return rnrRetry;
    }

    public int rqPsn() {
        return rqPsn;
    }

    public int sqPsn() {
        return sqPsn;
    }

    public int maxRdAtomic() {
        return maxRdAtomic;
    }

    public int maxDestRdAtomic() {
        return maxDestRdAtomic;
    }

    public int minRnrTimer() {
        return minRnrTimer;
    }

    public int destQpn() {
        return destQpn;
    }

    public boolean sqDrainedNotify() {
        return sqDrainedNotify;
    }

    /** Copies the attributes named in {@code other}'s mask into this one (used to keep a QP's current values). */
    QpAttributes merge(QpAttributes other) {
        int m = other.mask;
        if ((m & QpAttrMask.STATE) != 0) {
            state = other.state;
        }
        if ((m & QpAttrMask.ACCESS_FLAGS) != 0) {
            accessFlags = other.accessFlags;
        }
        if ((m & QpAttrMask.PKEY_INDEX) != 0) {
            pkeyIndex = other.pkeyIndex;
        }
        if ((m & QpAttrMask.PORT) != 0) {
            port = other.port;
        }
        if ((m & QpAttrMask.QKEY) != 0) {
            qkey = other.qkey;
        }
        if ((m & QpAttrMask.AV) != 0) {
            ah = other.ah.copy();
        }
        if ((m & QpAttrMask.PATH_MTU) != 0) {
            pathMtu = other.pathMtu;
        }
        if ((m & QpAttrMask.TIMEOUT) != 0) {
            timeout = other.timeout;
        }
        if ((m & QpAttrMask.RETRY_CNT) != 0) {
            retryCnt = other.retryCnt;
        }
        if ((m & QpAttrMask.RNR_RETRY) != 0) {
            rnrRetry = other.rnrRetry;
        }
        if ((m & QpAttrMask.RQ_PSN) != 0) {
            rqPsn = other.rqPsn;
        }
        if ((m & QpAttrMask.SQ_PSN) != 0) {
            sqPsn = other.sqPsn;
        }
        if ((m & QpAttrMask.MAX_QP_RD_ATOMIC) != 0) {
            maxRdAtomic = other.maxRdAtomic;
        }
        if ((m & QpAttrMask.MAX_DEST_RD_ATOMIC) != 0) {
            maxDestRdAtomic = other.maxDestRdAtomic;
        }
        if ((m & QpAttrMask.MIN_RNR_TIMER) != 0) {
            minRnrTimer = other.minRnrTimer;
        }
        if ((m & QpAttrMask.DEST_QPN) != 0) {
            destQpn = other.destQpn;
        }
        if ((m & QpAttrMask.EN_SQD_ASYNC_NOTIFY) != 0) {
            sqDrainedNotify = other.sqDrainedNotify;
        }
        mask |= m & ~QpAttrMask.CUR_STATE;
        return this;
    }

    /** A deep copy. */
    public QpAttributes copy() {
        QpAttributes c = new QpAttributes().merge(this);
        c.curState = curState;
        c.mask = mask;
        return c;
    }

    @Override
    public String toString() {
        return "QpAttributes{mask=" + QpAttrMask.describe(mask) + ", state=" + state + "}";
    }
}
