package io.jhca.mlx5.wqe;

/**
 * Bits of a control segment's {@code fm_ce_se} byte: fence mode in bits 7:5, completion mode in bits 3:2,
 * solicited event in bit 1.
 *
 * <p>Values: mlx5dv.h {@code MLX5_WQE_CTRL_*} for the ones rdma-core uses, kernel include/linux/mlx5/qp.h
 * {@code MLX5_FENCE_MODE_*} for the full fence-mode list. Careful: rdma-core's {@code MLX5_WQE_CTRL_FENCE}
 * (what {@code IBV_SEND_FENCE} becomes) is {@code 4 << 5 = 0x80}, the kernel's
 * {@code MLX5_FENCE_MODE_SMALL_AND_FENCE}, not the kernel's {@code MLX5_FENCE_MODE_FENCE (0x40)}.
 */
public final class FmCeSe {

    /** Raise a solicited event at the responder ({@code MLX5_WQE_CTRL_SOLICITED = 1 << 1}). */
    public static final int SOLICITED = 0x02;
    /** Always write a CQE ({@code MLX5_WQE_CTRL_CQ_UPDATE = 2 << 2}); without it the WQE is unsignaled. */
    public static final int CQ_UPDATE = 0x08;
    /** CQE and EQE ({@code MLX5_WQE_CTRL_CQ_UPDATE_AND_EQE = 3 << 2}, kernel qp.h). */
    public static final int CQ_UPDATE_AND_EQE = 0x0c;

    /** No fence ({@code MLX5_FENCE_MODE_NONE}). */
    public static final int FENCE_NONE = 0x00;
    /** Initiator small fence ({@code MLX5_WQE_CTRL_INITIATOR_SMALL_FENCE = 1 << 5}); rdma-core puts it on the WQE after a LOCAL_INV/BIND. */
    public static final int FENCE_INITIATOR_SMALL = 0x20;
    /** Kernel {@code MLX5_FENCE_MODE_FENCE = 2 << 5}. */
    public static final int FENCE_MODE_FENCE = 0x40;
    /** Kernel {@code MLX5_FENCE_MODE_STRONG_ORDERING = 3 << 5}. */
    public static final int FENCE_STRONG_ORDERING = 0x60;
    /** {@code MLX5_WQE_CTRL_FENCE = 4 << 5} (= kernel SMALL_AND_FENCE): what rdma-core sets for {@code IBV_SEND_FENCE}. */
    public static final int FENCE = 0x80;

    /** Mask of the fence-mode bits 7:5. */
    public static final int FENCE_MASK = 0xe0;
    /** Mask of the completion-mode bits 3:2. */
    public static final int CE_MASK = 0x0c;

    private FmCeSe() {
    }
}
