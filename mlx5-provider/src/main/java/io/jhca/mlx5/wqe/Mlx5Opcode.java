package io.jhca.mlx5.wqe;

/**
 * Send WQE opcodes, the low byte of a control segment's {@code opmod_idx_opcode}
 * (mlx5dv.h {@code enum MLX5_OPCODE_*}, same values in the kernel's include/linux/mlx5/qp.h).
 *
 * <p>Note: rdma-core sends ibverbs LOCAL_INV and BIND_MW as {@link #UMR}, not {@link #LOCAL_INVAL}
 * (qp.c {@code mlx5_ib_opcode[]}).
 */
public final class Mlx5Opcode {

    public static final int NOP = 0x00;
    public static final int SEND_INVAL = 0x01;
    public static final int RDMA_WRITE = 0x08;
    public static final int RDMA_WRITE_IMM = 0x09;
    public static final int SEND = 0x0a;
    public static final int SEND_IMM = 0x0b;
    /** Large send offload (Ethernet). */
    public static final int TSO = 0x0e;
    public static final int RDMA_READ = 0x10;
    public static final int ATOMIC_CS = 0x11;
    public static final int ATOMIC_FA = 0x12;
    public static final int ATOMIC_MASKED_CS = 0x14;
    public static final int ATOMIC_MASKED_FA = 0x15;
    public static final int FMR = 0x19;
    public static final int LOCAL_INVAL = 0x1b;
    public static final int CONFIG_CMD = 0x1f;
    public static final int SET_PSV = 0x20;
    public static final int UMR = 0x25;
    public static final int TAG_MATCHING = 0x28;
    public static final int FLOW_TBL_ACCESS = 0x2c;
    public static final int MMO = 0x2f;

    private Mlx5Opcode() {
    }
}
