package io.jhca.mlx5.cmd;

/**
 * The QP transitions {@link QpLayouts} leaves out: INIT2INIT, RTS2RTS and SQERR2RTS. All carry qpn, opt_param_mask and
 * a full qpc (272 bytes in); INIT2INIT and RTS2RTS also an {@code ece} word in and out, SQERR2RTS has none. Which qpc
 * fields the firmware reads is selected by opt_param_mask (kernel qp.h {@code MLX5_QP_OPTPAR_*}, listed here; which
 * bits each transition accepts is the kernel mlx5_ib qp.c {@code opt_mask} table). Positions from mlx5_ifc.h, checked
 * by a golden test.
 */
public final class QpModifyLayouts {

    /** qp.h {@code enum mlx5_qp_optpar}. */
    public static final int OPTPAR_ALT_ADDR_PATH = 1 << 0;
    public static final int OPTPAR_RRE = 1 << 1;
    public static final int OPTPAR_RAE = 1 << 2;
    public static final int OPTPAR_RWE = 1 << 3;
    public static final int OPTPAR_PKEY_INDEX = 1 << 4;
    public static final int OPTPAR_Q_KEY = 1 << 5;
    public static final int OPTPAR_RNR_TIMEOUT = 1 << 6;
    public static final int OPTPAR_PRIMARY_ADDR_PATH = 1 << 7;
    public static final int OPTPAR_SRA_MAX = 1 << 8;
    public static final int OPTPAR_RRA_MAX = 1 << 9;
    public static final int OPTPAR_PM_STATE = 1 << 10;
    public static final int OPTPAR_RETRY_COUNT = 1 << 12;
    public static final int OPTPAR_RNR_RETRY = 1 << 13;
    public static final int OPTPAR_ACK_TIMEOUT = 1 << 14;
    public static final int OPTPAR_PRI_PORT = 1 << 16;
    public static final int OPTPAR_SRQN = 1 << 18;
    public static final int OPTPAR_CQN_RCV = 1 << 19;

    /** qpc.rq_type, qp.h {@code MLX5_NON_ZERO_RQ / MLX5_SRQ_RQ / MLX5_ZERO_LEN_RQ}. */
    public static final int RQ_TYPE_REGULAR = 0x0;
    public static final int RQ_TYPE_SRQ = 0x1;
    public static final int RQ_TYPE_ZERO_LEN = 0x3;
    /** qpc.atomic_mode, driver.h {@code MLX5_ATOMIC_MODE_IB_COMP}: IB-compliant 8-byte CMP_SWAP and FETCH_ADD. */
    public static final int ATOMIC_MODE_IB_COMP = 1;

    public static final Layout INIT2INIT_QP_IN = withEce("init2init_qp_in");
    public static final Layout INIT2INIT_QP_OUT = Layout.struct("init2init_qp_out", 0x10).outHeader()
            .field("ece", 0x60, 32)
            .build();
    public static final Layout RTS2RTS_QP_IN = withEce("rts2rts_qp_in");
    public static final Layout RTS2RTS_QP_OUT = Layout.struct("rts2rts_qp_out", 0x10).outHeader()
            .field("ece", 0x60, 32)
            .build();
    public static final Layout SQERR2RTS_QP_IN = Layout.struct("sqerr2rts_qp_in", 0x110).inHeader(true)
            .field("qpn", 0x48, 24)
            .field("opt_param_mask", 0x80, 32)
            .embed("qpc", 0xc0, QpLayouts.QPC)
            .build();
    public static final Layout SQERR2RTS_QP_OUT = Layout.struct("sqerr2rts_qp_out", 0x10).outHeader().build();

    private QpModifyLayouts() {
    }

    private static Layout withEce(String name) {
        return Layout.struct(name, 0x110).inHeader(true)
                .field("qpn", 0x48, 24)
                .field("opt_param_mask", 0x80, 32)
                .field("ece", 0xa0, 32)
                .embed("qpc", 0xc0, QpLayouts.QPC)
                .build();
    }
}
