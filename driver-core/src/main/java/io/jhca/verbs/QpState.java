package io.jhca.verbs;

/** Queue pair states, numbered as {@code enum ibv_qp_state} (IBTA 10.3.1). */
public enum QpState {
    RESET, INIT, RTR, RTS, SQD, SQE, ERR;

    /** The libibverbs value of this state. */
    public int value() {
        return ordinal();
    }
}
