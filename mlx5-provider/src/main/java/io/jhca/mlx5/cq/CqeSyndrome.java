package io.jhca.mlx5.cq;

/** Error CQE syndromes ({@code MLX5_CQE_SYNDROME_*}, mlx5dv.h). */
public final class CqeSyndrome {

    public static final int LOCAL_LENGTH_ERR = 0x01;
    public static final int LOCAL_QP_OP_ERR = 0x02;
    public static final int LOCAL_PROT_ERR = 0x04;
    public static final int WR_FLUSH_ERR = 0x05;
    public static final int MW_BIND_ERR = 0x06;
    public static final int BAD_RESP_ERR = 0x10;
    public static final int LOCAL_ACCESS_ERR = 0x11;
    public static final int REMOTE_INVAL_REQ_ERR = 0x12;
    public static final int REMOTE_ACCESS_ERR = 0x13;
    public static final int REMOTE_OP_ERR = 0x14;
    public static final int TRANSPORT_RETRY_EXC_ERR = 0x15;
    public static final int RNR_RETRY_EXC_ERR = 0x16;
    public static final int REMOTE_ABORTED_ERR = 0x22;

    /** Vendor syndrome of an on-demand-paging page fault ({@code MLX5_CQE_VENDOR_SYNDROME_ODP_PFAULT}). */
    public static final int VENDOR_ODP_PFAULT = 0x93;

    private CqeSyndrome() {
    }
}
