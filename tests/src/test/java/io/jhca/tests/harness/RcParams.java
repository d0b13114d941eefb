package io.jhca.tests.harness;

import io.jhca.verbs.Access;
import io.jhca.verbs.Mtu;

/**
 * The attributes two RC QPs are connected with. Defaults are rc_pingpong's (timeout 14, retry_cnt 7,
 * rnr_retry 7, min_rnr_timer 12), with remote read/write/atomic allowed and up to 4 reads/atomics in flight.
 */
public final class RcParams {
    Mtu mtu;
    int qpAccess = Access.mask(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    int timeout = 14;
    int retryCnt = 7;
    int rnrRetry = 7;
    int minRnrTimer = 12;
    int maxRdAtomic = 4;

    public static RcParams defaults() {
        return new RcParams();
    }

    /** Path MTU; null (the default) takes the smaller active MTU of the two ports. */
    public RcParams mtu(Mtu m) {
        mtu = m;
        return this;
    }

    /** Remote access flags of both QPs (IBV_QP_ACCESS_FLAGS). */
    public RcParams qpAccess(int mask) {
        qpAccess = mask;
        return this;
    }

    /** Local ACK timeout code: 4.096 us * 2^timeout. */
    public RcParams timeout(int t) {
        timeout = t;
        return this;
    }

    public RcParams retryCnt(int n) {
        retryCnt = n;
        return this;
    }

    public RcParams rnrRetry(int n) {
        rnrRetry = n;
        return this;
    }

    public RcParams minRnrTimer(int code) {
        minRnrTimer = code;
        return this;
    }

    /** Reads/atomics in flight (capped by the device's limits at connect time). */
    public RcParams maxRdAtomic(int n) {
        maxRdAtomic = n;
        return this;
    }

    public int qpAccess() {
        return qpAccess;
    }

    public Mtu mtu() {
        return mtu;
    }
}
