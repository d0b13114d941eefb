package io.jhca.mlx5.cq;

/**
 * CQE opcodes, bits 7:4 of {@code op_own} (mlx5dv.h {@code MLX5_CQE_*}), and CQE formats, bits 3:2.
 */
public final class CqeOpcode {

    /** Requester completion (send queue). */
    public static final int REQ = 0;
    /** Responder: RDMA WRITE with immediate consumed a receive WQE. */
    public static final int RESP_WR_IMM = 1;
    public static final int RESP_SEND = 2;
    public static final int RESP_SEND_IMM = 3;
    public static final int RESP_SEND_INV = 4;
    public static final int RESIZE_CQ = 5;
    public static final int NO_PACKET = 6;
    public static final int SIG_ERR = 12;
    /** Requester error: the CQE is an {@link ErrCqe}. */
    public static final int REQ_ERR = 13;
    /** Responder error: the CQE is an {@link ErrCqe}. */
    public static final int RESP_ERR = 14;
    /** Not written by the HCA yet (rdma-core initialises every CQE to {@code op_own = 0xf0}). */
    public static final int INVALID = 15;

    /** Format 1: up to 32 bytes of received data inline in the CQE ({@code MLX5_INLINE_SCATTER_32}, op_own bit). */
    public static final int INLINE_SCATTER_32 = 0x4;
    /** Format 2: up to 64 bytes inline in the preceding 64 bytes of a 128-byte CQE ({@code MLX5_INLINE_SCATTER_64}). */
    public static final int INLINE_SCATTER_64 = 0x8;
    /** Format 3: compressed CQE (mini-CQE array). */
    public static final int FORMAT_COMPRESSED = 3;

    private CqeOpcode() {
    }

    /** True for the two error opcodes, whose CQE is laid out as {@code struct mlx5_err_cqe}. */
    public static boolean isError(int opcode) {
        return opcode == REQ_ERR || opcode == RESP_ERR;
    }
}
