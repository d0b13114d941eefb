package io.jhca.verbs;

/**
 * The Modify QP rules every provider applies before touching its QP: is the state transition legal, and does
 * the attribute mask carry every required attribute and nothing that is not allowed. Behaves as the kernel's
 * {@code ib_modify_qp_is_ok()} (drivers/infiniband/core/verbs.c), which rxe and mlx5 call on each
 * ibv_modify_qp, so a mask jhca accepts is one libibverbs would accept too; the table is in
 * {@link QpTransitionTable}.
 *
 * <p>STATE: required whenever the state changes. When current == next it is optional, as in the kernel, where a
 * mask without STATE means "stay in the current state" (e.g. an RTS-&gt;RTS modify of ACCESS_FLAGS); callers that
 * see no STATE bit pass {@code next == current}.
 *
 * <p>CUR_STATE: when set, the caller's claimed current state ({@code attr.curState}) replaces the QP's tracked
 * state for this check, as the kernel drivers do; it is only allowed on transitions into RTS from RTR, RTS, SQD
 * and SQE.
 *
 * <p>A passing check allocates nothing; only a refusal builds its message.
 */
public final class QpTransitions {
    private static final String[] SUCCESSORS = successors();

    private QpTransitions() {
    }

    /** Whether the IBTA table has a Modify QP from {@code cur} to {@code next} (for any transport). */
    public static boolean isValid(QpState cur, QpState next) {
        return QpTransitionTable.valid(nonNull(cur, "current state"), nonNull(next, "next state"));
    }

    /** Bits a modify from {@code cur} to {@code next} must carry (STATE included when the state changes); 0 if invalid. */
    public static int requiredMask(QpType type, QpState cur, QpState next) {
        if (!isValid(cur, next)) {
            return 0;
        }
        int req = QpTransitionTable.required(nonNull(type, "QP type"), cur, next);
        return cur == next ? req : req | QpAttrMask.STATE;
    }

    /** Bits a modify from {@code cur} to {@code next} may carry besides the required ones; 0 if invalid. */
    public static int optionalMask(QpType type, QpState cur, QpState next) {
        if (!isValid(cur, next)) {
            return 0;
        }
        int opt = QpTransitionTable.optional(nonNull(type, "QP type"), cur, next);
        return cur == next ? opt | QpAttrMask.STATE : opt;
    }

    /**
     * Checks a modify of a QP in state {@code current} to {@code next} with {@code attrMask}; with CUR_STATE in
     * the mask the claimed current state is taken to be {@code current} itself.
     *
     * @throws VerbsException EINVAL naming the illegal transition or the missing or forbidden attributes
     */
    public static void check(QpType type, QpState current, QpState next, int attrMask) {
        check(type, current, next, attrMask, current);
    }

    /**
     * Checks a modify of a QP the provider tracks in state {@code qpState}. If {@code attrMask} has CUR_STATE,
     * {@code attrCurState} (the caller's {@code attr.curState}) is taken as the current state instead, as
     * ibv_modify_qp does; otherwise {@code attrCurState} is ignored and may be null.
     *
     * @throws VerbsException EINVAL naming the illegal transition or the missing or forbidden attributes
     */
    public static void check(QpType type, QpState qpState, QpState next, int attrMask, QpState attrCurState) {
        nonNull(type, "QP type");
        nonNull(qpState, "current state");
        nonNull(next, "next state");
        boolean claimed = (attrMask & QpAttrMask.CUR_STATE) != 0;
        if (claimed && attrCurState == null) {
            throw new VerbsException(VerbsException.EINVAL,
                "modify QP " + qpState + "->" + next + ": CUR_STATE is set but no current state was given");
        }
        QpState cur = claimed ? attrCurState : qpState;
        if (!QpTransitionTable.valid(cur, next)) {
            throw new VerbsException(VerbsException.EINVAL, prefix(null, cur, next, qpState)
                + "illegal transition (" + cur + " may go to " + SUCCESSORS[cur.ordinal()] + ")");
        }
        int req = requiredMask(type, cur, next);
        int missing = req & ~attrMask;
        int forbidden = attrMask & ~(req | optionalMask(type, cur, next));
        if ((missing | forbidden) != 0) {
            throw new VerbsException(VerbsException.EINVAL, maskMessage(type, cur, next, qpState, missing, forbidden));
        }
    }

    private static String maskMessage(QpType type, QpState cur, QpState next, QpState tracked,
                                      int missing, int forbidden) {
        StringBuilder sb = new StringBuilder(prefix(type, cur, next, tracked));
        if (missing != 0) {
            sb.append("missing required attribute(s) ").append(QpAttrMask.describe(missing));
        }
        if (forbidden != 0) {
            if (missing != 0) {
                sb.append("; ");
            }
            sb.append("attribute(s) not allowed: ").append(QpAttrMask.describe(forbidden));
        }
        return sb.toString();
    }

    private static String prefix(QpType type, QpState cur, QpState next, QpState tracked) {
        StringBuilder sb = new StringBuilder("modify QP ").append(cur).append("->").append(next);
        if (type != null || cur != tracked) {
            sb.append(" (");
            if (type != null) {
                sb.append(type);
            }
            if (cur != tracked) {
                sb.append(type != null ? ", " : "").append("CUR_STATE given; QP is in ").append(tracked);
            }
            sb.append(')');
        }
        return sb.append(": ").toString();
    }

    /** "RESET, INIT" for each state: the successors named in an illegal-transition message. */
    private static String[] successors() {
        QpState[] states = QpState.values();
        String[] out = new String[states.length];
        for (QpState cur : states) {
            StringBuilder sb = new StringBuilder();
            for (QpState next : states) {
                if (QpTransitionTable.valid(cur, next)) {
                    sb.append(sb.length() == 0 ? "" : ", ").append(next);
                }
            }
            out[cur.ordinal()] = sb.toString();
        }
        return out;
    }

    private static <T> T nonNull(T value, String what) {
        if (value == null) {
            throw new VerbsException(VerbsException.EINVAL, "modify QP: " + what + " is null");
        }
        return value;
    }
}
