package io.jhca.mlx5.wqe;

/**
 * Send WQE geometry (mlx5dv.h {@code MLX5_SEND_WQE_BB}, kernel qp.h {@code MLX5_SEND_WQE_DS},
 * {@code MLX5_SEND_WQE_MAX_WQEBBS}, {@code MLX5_WQE_CTRL_DS_MASK}).
 */
public final class SendWqeLayout {

    /** A WQE basic block: the unit of SQ slots and of the producer counter. */
    public static final int WQEBB = 64;
    /** log2 of {@link #WQEBB}. */
    public static final int WQEBB_SHIFT = 6;
    /** A data-segment unit ("DS"): the unit of the control segment's size field. */
    public static final int DS = 16;
    /** The control segment's DS field is 6 bits wide. */
    public static final int MAX_DS = 0x3f;
    /** Largest WQE: 16 WQEBBs. */
    public static final int MAX_WQEBBS = 16;

    private SendWqeLayout() {
    }

    /** WQEBBs a WQE of {@code ds} units takes, i.e. how far {@code cur_post} advances ({@code DIV_ROUND_UP(ds * 16, 64)}). */
    public static int wqebbs(int ds) {
        return (ds * DS + WQEBB - 1) >> WQEBB_SHIFT;
    }
}
