package io.jhca.mlx5.cmd;

import java.util.List;

/**
 * Shared receive queue commands: the SRQ context {@code srqc}, CREATE_SRQ (the ring by a trailing PAS list, as
 * CREATE_QP), DESTROY_SRQ, QUERY_SRQ and ARM_RQ with op_mod SRQ (arms the limit water mark {@code lwm}: the device
 * raises one SRQ_RQ_LIMIT event when fewer WQEs than that are posted, then disarms). Positions from the kernel's
 * mlx5_ifc.h. srqc.log_rq_stride is log2(WQE size) - 4, log_page_size counts from 4 KiB, as in the qpc. (The
 * kernel's mlx5_ib creates basic SRQs as RMPs once ISSI is 1; CREATE_SRQ with an srqc is the ISSI 0 route that
 * every ConnectX still takes and that needs no RQ object behind the SRQ.)
 */
public final class SrqLayouts {

    /** mlx5_ifc {@code MLX5_ARM_RQ_IN_OP_MOD_SRQ}. */
    public static final int ARM_RQ_OP_MOD_SRQ = 0x1;
    /** srqc.state as QUERY_SRQ reports it, mlx5_ifc {@code MLX5_SRQC_STATE_GOOD} / {@code _ERROR}. */
    public static final int STATE_GOOD = 0x0;
    public static final int STATE_ERROR = 0x1;

    /** SRQ context, 64 bytes. */
    public static final Layout SRQC = Layout.struct("srqc", 0x40)
            .field("state", 0x00, 4)
            .field("log_srq_size", 0x04, 4)
            .field("wq_signature", 0x20, 1)
            .field("cont_srq", 0x21, 1)
            .field("rlky", 0x23, 1)
            .field("log_rq_stride", 0x25, 3)
            .field("xrcd", 0x28, 24)
            .field("page_offset", 0x40, 6)
            .field("cqn", 0x48, 24)
            .field("log_page_size", 0x82, 6)
            .field("pd", 0xc8, 24)
            .field("lwm", 0xe0, 16)
            .field("wqe_cnt", 0xf0, 16)
            .field("dbr_addr", 0x140, 64)
            .build();

    public static final Layout CREATE_SRQ_IN = Layout.struct("create_srq_in", 0x110).inHeader(true)
            .embed("srq_context_entry", 0x80, SRQC)
            .flexibleArray("pas", 0x880, 64)
            .build();
    public static final Layout CREATE_SRQ_OUT = Layout.struct("create_srq_out", 0x10).outHeader()
            .field("srqn", 0x48, 24)
            .build();

    public static final Layout DESTROY_SRQ_IN = Layout.struct("destroy_srq_in", 0x10).inHeader(true)
            .field("srqn", 0x48, 24)
            .build();
    public static final Layout DESTROY_SRQ_OUT = Layout.struct("destroy_srq_out", 0x10).outHeader().build();

    public static final Layout QUERY_SRQ_IN = Layout.struct("query_srq_in", 0x10).inHeader(false)
            .field("srqn", 0x48, 24)
            .build();
    public static final Layout QUERY_SRQ_OUT = Layout.struct("query_srq_out", 0x110).outHeader()
            .embed("srq_context_entry", 0x80, SRQC)
            .flexibleArray("pas", 0x880, 64)
            .build();

    public static final Layout ARM_RQ_IN = Layout.struct("arm_rq_in", 0x10).inHeader(true)
            .field("srq_number", 0x48, 24)
            .field("lwm", 0x70, 16)
            .build();
    public static final Layout ARM_RQ_OUT = Layout.struct("arm_rq_out", 0x10).outHeader().build();

    private static final List<Layout> ALL = List.of(SRQC, CREATE_SRQ_IN, CREATE_SRQ_OUT, DESTROY_SRQ_IN,
            DESTROY_SRQ_OUT, QUERY_SRQ_IN, QUERY_SRQ_OUT, ARM_RQ_IN, ARM_RQ_OUT);

    private SrqLayouts() {
    }

    /** Every layout here (golden-tested by SrqGoldenTest; the opcodes resolve through {@link DriverCmdLayouts}). */
    public static List<Layout> all() {
        return ALL;
    }

    /** The input (index 0) and output (1) layouts of an SRQ opcode, or null. */
    static Layout[] forOpcode(int opcode) {
        switch (opcode) {
            case CmdOpcode.CREATE_SRQ: return new Layout[] {CREATE_SRQ_IN, CREATE_SRQ_OUT};
            case CmdOpcode.DESTROY_SRQ: return new Layout[] {DESTROY_SRQ_IN, DESTROY_SRQ_OUT};
            case CmdOpcode.QUERY_SRQ: return new Layout[] {QUERY_SRQ_IN, QUERY_SRQ_OUT};
            case CmdOpcode.ARM_RQ: return new Layout[] {ARM_RQ_IN, ARM_RQ_OUT};
            default: return null;
        }
    }
}
