package io.jhca.verbs;

import static io.jhca.verbs.QpAttrMask.ACCESS_FLAGS;
import static io.jhca.verbs.QpAttrMask.ALT_PATH;
import static io.jhca.verbs.QpAttrMask.AV;
import static io.jhca.verbs.QpAttrMask.CUR_STATE;
import static io.jhca.verbs.QpAttrMask.DEST_QPN;
import static io.jhca.verbs.QpAttrMask.EN_SQD_ASYNC_NOTIFY;
import static io.jhca.verbs.QpAttrMask.MAX_DEST_RD_ATOMIC;
import static io.jhca.verbs.QpAttrMask.MAX_QP_RD_ATOMIC;
import static io.jhca.verbs.QpAttrMask.MIN_RNR_TIMER;
import static io.jhca.verbs.QpAttrMask.PATH_MIG_STATE;
import static io.jhca.verbs.QpAttrMask.PATH_MTU;
import static io.jhca.verbs.QpAttrMask.PKEY_INDEX;
import static io.jhca.verbs.QpAttrMask.PORT;
import static io.jhca.verbs.QpAttrMask.QKEY;
import static io.jhca.verbs.QpAttrMask.RETRY_CNT;
import static io.jhca.verbs.QpAttrMask.RNR_RETRY;
import static io.jhca.verbs.QpAttrMask.RQ_PSN;
import static io.jhca.verbs.QpAttrMask.SQ_PSN;
import static io.jhca.verbs.QpAttrMask.TIMEOUT;
import static io.jhca.verbs.QpState.ERR;
import static io.jhca.verbs.QpState.INIT;
import static io.jhca.verbs.QpState.RESET;
import static io.jhca.verbs.QpState.RTR;
import static io.jhca.verbs.QpState.RTS;
import static io.jhca.verbs.QpState.SQD;
import static io.jhca.verbs.QpState.SQE;
import static io.jhca.verbs.QpType.RC;
import static io.jhca.verbs.QpType.UC;
import static io.jhca.verbs.QpType.UD;

/**
 * The IBTA QP state transition table (IBTA vol. 1, 10.3 / 11.2.5), restricted to RC, UC and UD: which
 * (current, next) pairs a Modify QP may request, and per transport which attribute mask bits it must and may
 * carry. The STATE bit is not stored here; {@link QpTransitions} adds it.
 *
 * <p>Facts taken from the Linux kernel, drivers/infiniband/core/verbs.c, {@code qp_state_table} (read at
 * torvalds/linux f4d8f354d753 and gregkh/linux 253c2ed71a53; identical for RC/UC/UD). XRC, RAW_PACKET, SMI
 * and GSI columns are not carried over: jhca has no such QP types. Points worth knowing:
 * <ul>
 * <li>RESET goes only to RESET or INIT: the kernel has no RESET-&gt;ERR entry.</li>
 * <li>RESET and ERR are reachable from every other state with no attribute besides STATE.</li>
 * <li>RC has no optional attribute for SQE-&gt;RTS (an RC QP never enters SQE: a send error moves it to ERR),
 *     so only STATE is accepted there.</li>
 * <li>CUR_STATE is optional only for RTR-&gt;RTS, RTS-&gt;RTS, SQD-&gt;RTS and SQE-&gt;RTS.</li>
 * <li>RATE_LIMIT and CAP are never accepted for RC, UC or UD (the kernel allows RATE_LIMIT only for
 *     RAW_PACKET, on RTR-&gt;RTS and RTS-&gt;RTS).</li>
 * </ul>
 */
final class QpTransitionTable {
    static final int STATES = 7;
    static final int TYPES = 3;

    private static final boolean[] VALID = new boolean[STATES * STATES];
    private static final int[] REQUIRED = new int[TYPES * STATES * STATES];
    private static final int[] OPTIONAL = new int[TYPES * STATES * STATES];

    static {
        for (QpState s : QpState.values()) {
            allow(s, RESET);
            if (s != RESET) {
                allow(s, ERR);
            }
        }

        allow(RESET, INIT);
        require(RESET, INIT, RC, PKEY_INDEX | PORT | ACCESS_FLAGS);
        require(RESET, INIT, UC, PKEY_INDEX | PORT | ACCESS_FLAGS);
        require(RESET, INIT, UD, PKEY_INDEX | PORT | QKEY);

        allow(INIT, INIT);
        permit(INIT, INIT, RC, PKEY_INDEX | PORT | ACCESS_FLAGS);
        permit(INIT, INIT, UC, PKEY_INDEX | PORT | ACCESS_FLAGS);
        permit(INIT, INIT, UD, PKEY_INDEX | PORT | QKEY);

        allow(INIT, RTR);
        require(INIT, RTR, RC, AV | PATH_MTU | DEST_QPN | RQ_PSN | MAX_DEST_RD_ATOMIC | MIN_RNR_TIMER);
        require(INIT, RTR, UC, AV | PATH_MTU | DEST_QPN | RQ_PSN);
        permit(INIT, RTR, RC, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX);
        permit(INIT, RTR, UC, ALT_PATH | ACCESS_FLAGS | PKEY_INDEX);
        permit(INIT, RTR, UD, PKEY_INDEX | QKEY);

        allow(RTR, RTS);
        require(RTR, RTS, RC, SQ_PSN | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC);
        require(RTR, RTS, UC, SQ_PSN);
        require(RTR, RTS, UD, SQ_PSN);
        permit(RTR, RTS, RC, CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE);
        permit(RTR, RTS, UC, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE);
        permit(RTR, RTS, UD, CUR_STATE | QKEY);

        allow(RTS, RTS);
        permit(RTS, RTS, RC, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE | MIN_RNR_TIMER);
        permit(RTS, RTS, UC, CUR_STATE | ACCESS_FLAGS | ALT_PATH | PATH_MIG_STATE);
        permit(RTS, RTS, UD, CUR_STATE | QKEY);

        allow(RTS, SQD);
        permit(RTS, SQD, RC, EN_SQD_ASYNC_NOTIFY);
        permit(RTS, SQD, UC, EN_SQD_ASYNC_NOTIFY);
        permit(RTS, SQD, UD, EN_SQD_ASYNC_NOTIFY);

        allow(SQD, RTS);
        permit(SQD, RTS, RC, CUR_STATE | ALT_PATH | ACCESS_FLAGS | MIN_RNR_TIMER | PATH_MIG_STATE);
        permit(SQD, RTS, UC, CUR_STATE | ALT_PATH | ACCESS_FLAGS | PATH_MIG_STATE);
        permit(SQD, RTS, UD, CUR_STATE | QKEY);

        // While drained, a QP may have its path and (RC) its timers and RDMA resources changed.
        allow(SQD, SQD);
        permit(SQD, SQD, RC, PORT | AV | TIMEOUT | RETRY_CNT | RNR_RETRY | MAX_QP_RD_ATOMIC
                | MAX_DEST_RD_ATOMIC | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | MIN_RNR_TIMER | PATH_MIG_STATE);
        permit(SQD, SQD, UC, AV | ALT_PATH | ACCESS_FLAGS | PKEY_INDEX | PATH_MIG_STATE);
        permit(SQD, SQD, UD, PKEY_INDEX | QKEY);

        allow(SQE, RTS);
        permit(SQE, RTS, UC, CUR_STATE | ACCESS_FLAGS);
        permit(SQE, RTS, UD, CUR_STATE | QKEY);
    }

    private QpTransitionTable() {
    }

    static boolean valid(QpState cur, QpState next) {
        return VALID[cur.ordinal() * STATES + next.ordinal()];
    }

    /** Required bits other than STATE; 0 for an invalid transition. */
    static int required(QpType type, QpState cur, QpState next) {
        return REQUIRED[index(type, cur, next)];
    }

    /** Optional bits other than STATE; 0 for an invalid transition. */
    static int optional(QpType type, QpState cur, QpState next) {
        return OPTIONAL[index(type, cur, next)];
    }

    private static int index(QpType type, QpState cur, QpState next) {
        return (type.ordinal() * STATES + cur.ordinal()) * STATES + next.ordinal();
    }

    private static void allow(QpState cur, QpState next) {
        VALID[cur.ordinal() * STATES + next.ordinal()] = true;
    }

    private static void require(QpState cur, QpState next, QpType type, int mask) {
        REQUIRED[index(type, cur, next)] = mask;
    }

    private static void permit(QpState cur, QpState next, QpType type, int mask) {
        OPTIONAL[index(type, cur, next)] = mask;
    }
}
