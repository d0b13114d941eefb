package io.jhca.verbs;

/** Work completion status, with the values of {@code enum ibv_wc_status} (libibverbs verbs.h). */
public enum WcStatus {
    SUCCESS,
    LOC_LEN_ERR,
    LOC_QP_OP_ERR,
    LOC_EEC_OP_ERR,
    LOC_PROT_ERR,
    WR_FLUSH_ERR,
    MW_BIND_ERR,
    BAD_RESP_ERR,
    LOC_ACCESS_ERR,
    REM_INV_REQ_ERR,
    REM_ACCESS_ERR,
    REM_OP_ERR,
    RETRY_EXC_ERR,
    RNR_RETRY_EXC_ERR,
    LOC_RDD_VIOL_ERR,
    REM_INV_RD_REQ_ERR,
    REM_ABORT_ERR,
    INV_EECN_ERR,
    INV_EEC_STATE_ERR,
    FATAL_ERR,
    RESP_TIMEOUT_ERR,
    GENERAL_ERR,
    TM_ERR,
    TM_RNDV_INCOMPLETE;

    private static final WcStatus[] VALUES = values();

    /** The libibverbs value. */
    public int value() {
        return ordinal();
    }

    /** The status for a libibverbs value. */
    public static WcStatus of(int value) {
        return VALUES[value];
    }

    /** The text {@code ibv_wc_status_str} gives, e.g. "transport retry counter exceeded". */
    public String description() {
        switch (this) {
            case SUCCESS: return "success";
            case LOC_LEN_ERR: return "local length error";
            case LOC_QP_OP_ERR: return "local QP operation error";
            case LOC_EEC_OP_ERR: return "local EE context operation error";
            case LOC_PROT_ERR: return "local protection error";
            case WR_FLUSH_ERR: return "Work Request Flushed Error";
            case MW_BIND_ERR: return "memory management operation error";
            case BAD_RESP_ERR: return "bad response error";
            case LOC_ACCESS_ERR: return "local access error";
            case REM_INV_REQ_ERR: return "remote invalid request error";
            case REM_ACCESS_ERR: return "remote access error";
            case REM_OP_ERR: return "remote operation error";
            case RETRY_EXC_ERR: return "transport retry counter exceeded";
            case RNR_RETRY_EXC_ERR: return "RNR retry counter exceeded";
            case LOC_RDD_VIOL_ERR: return "local RDD violation error";
            case REM_INV_RD_REQ_ERR: return "remote invalid RD request";
            case REM_ABORT_ERR: return "aborted error";
            case INV_EECN_ERR: return "invalid EE context number";
            case INV_EEC_STATE_ERR: return "invalid EE context state";
            case FATAL_ERR: return "fatal error";
            case RESP_TIMEOUT_ERR: return "response timeout error";
            case GENERAL_ERR: return "general error";
            case TM_ERR: return "TM error";
            case TM_RNDV_INCOMPLETE: return "TM software rendezvous";
            default: throw new AssertionError(this);
        }
    }
}
