package io.jhca.mlx5.cq;

import io.jhca.verbs.WcStatus;

/** Error CQE syndrome to verbs work-completion status. */
public final class CqeStatus {

    private CqeStatus() {
    }

    /**
     * The status rdma-core gives an error CQE with this syndrome (providers/mlx5/cq.c
     * {@code mlx5_handle_error_cqe}); every syndrome not listed there is {@code GENERAL_ERR}.
     */
    public static WcStatus toWcStatus(int syndrome) {
        switch (syndrome) {
            case CqeSyndrome.LOCAL_LENGTH_ERR: return WcStatus.LOC_LEN_ERR;
            case CqeSyndrome.LOCAL_QP_OP_ERR: return WcStatus.LOC_QP_OP_ERR;
            case CqeSyndrome.LOCAL_PROT_ERR: return WcStatus.LOC_PROT_ERR;
            case CqeSyndrome.WR_FLUSH_ERR: return WcStatus.WR_FLUSH_ERR;
            case CqeSyndrome.MW_BIND_ERR: return WcStatus.MW_BIND_ERR;
            case CqeSyndrome.BAD_RESP_ERR: return WcStatus.BAD_RESP_ERR;
            case CqeSyndrome.LOCAL_ACCESS_ERR: return WcStatus.LOC_ACCESS_ERR;
            case CqeSyndrome.REMOTE_INVAL_REQ_ERR: return WcStatus.REM_INV_REQ_ERR;
            case CqeSyndrome.REMOTE_ACCESS_ERR: return WcStatus.REM_ACCESS_ERR;
            case CqeSyndrome.REMOTE_OP_ERR: return WcStatus.REM_OP_ERR;
            case CqeSyndrome.TRANSPORT_RETRY_EXC_ERR: return WcStatus.RETRY_EXC_ERR;
            case CqeSyndrome.RNR_RETRY_EXC_ERR: return WcStatus.RNR_RETRY_EXC_ERR;
            case CqeSyndrome.REMOTE_ABORTED_ERR: return WcStatus.REM_ABORT_ERR;
            default: return WcStatus.GENERAL_ERR;
        }
    }
}
