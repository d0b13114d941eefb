package io.jhca.connectx;

import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.verbs.WcStatus;

/**
 * Error CQE syndromes: from a verbs status (the inverse of rdma-core's {@code mlx5_handle_error_cqe}, i.e. of
 * {@link io.jhca.mlx5.cq.CqeStatus#toWcStatus}) and the vendor syndromes the model puts next to them. Real vendor
 * syndromes are undocumented firmware codes; these are the model's own, one per cause, so a test (or
 * {@code wc.vendor_err}) tells exactly which check failed.
 */
public final class CqeErrors {

    /** Not a PRM syndrome: rdma-core reads any syndrome it does not list as GENERAL_ERR. */
    public static final int SYNDROME_GENERAL = 0xff;

    /** The status came from the transport (rxe): a remote NAK, retries exhausted, a local access check there. */
    public static final int VENDOR_TRANSPORT = 0x50;
    public static final int VENDOR_FLUSH = 0x51;
    public static final int VENDOR_BAD_OPCODE = 0x52;
    public static final int VENDOR_BAD_DS = 0x53;
    public static final int VENDOR_BAD_SEGMENT = 0x54;
    public static final int VENDOR_INLINE_LENGTH = 0x55;
    public static final int VENDOR_BAD_LKEY = 0x56;
    public static final int VENDOR_BAD_ADDRESS = 0x57;
    public static final int VENDOR_BAD_PD = 0x58;
    public static final int VENDOR_NO_LOCAL_WRITE = 0x59;
    public static final int VENDOR_LENGTH = 0x5a;
    public static final int VENDOR_BAD_INDEX = 0x5b;
    public static final int VENDOR_BAD_QPN = 0x5c;
    public static final int VENDOR_TOO_MANY_SGES = 0x5d;
    public static final int VENDOR_UNALIGNED_ATOMIC = 0x5e;
    public static final int VENDOR_BAD_AV = 0x5f;
    public static final int VENDOR_POST_REFUSED = 0x60;
    /** A UMR naming no window key of this device, or whose KLM or QPN contradicts its mkey context. */
    public static final int VENDOR_BAD_WINDOW = 0x61;

    private CqeErrors() {
    }

    /** The CQE syndrome rdma-core maps back to {@code status} (GENERAL for statuses it has no syndrome for). */
    public static int syndromeOf(WcStatus status) {
        switch (status) {
            case LOC_LEN_ERR: return CqeSyndrome.LOCAL_LENGTH_ERR;
            case LOC_QP_OP_ERR: return CqeSyndrome.LOCAL_QP_OP_ERR;
            case LOC_PROT_ERR: return CqeSyndrome.LOCAL_PROT_ERR;
            case WR_FLUSH_ERR: return CqeSyndrome.WR_FLUSH_ERR;
            case MW_BIND_ERR: return CqeSyndrome.MW_BIND_ERR;
            case BAD_RESP_ERR: return CqeSyndrome.BAD_RESP_ERR;
            case LOC_ACCESS_ERR: return CqeSyndrome.LOCAL_ACCESS_ERR;
            case REM_INV_REQ_ERR: return CqeSyndrome.REMOTE_INVAL_REQ_ERR;
            case REM_ACCESS_ERR: return CqeSyndrome.REMOTE_ACCESS_ERR;
            case REM_OP_ERR: return CqeSyndrome.REMOTE_OP_ERR;
            case RETRY_EXC_ERR: return CqeSyndrome.TRANSPORT_RETRY_EXC_ERR;
            case RNR_RETRY_EXC_ERR: return CqeSyndrome.RNR_RETRY_EXC_ERR;
            case REM_ABORT_ERR: return CqeSyndrome.REMOTE_ABORTED_ERR;
            default: return SYNDROME_GENERAL;
        }
    }
}
