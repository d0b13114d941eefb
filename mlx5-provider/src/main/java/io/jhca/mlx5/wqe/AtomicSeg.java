package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Atomic segment ({@code struct mlx5_wqe_atomic_seg}, mlx5dv.h, 16 bytes): 0 be64 {@code swap_add},
 * 8 be64 {@code compare}. Compare-and-swap: swap_add = swap value, compare = compare value; fetch-and-add:
 * swap_add = the addend (rdma-core qp.c {@code _set_atomic_seg}). It follows the raddr segment; the local
 * data segment of an atomic always has byte_count 8 ({@code MLX5_ATOMIC_SIZE}).
 */
public final class AtomicSeg {

    public static final int SIZE = 16;
    public static final int SWAP_ADD_OFFSET = 0;
    public static final int COMPARE_OFFSET = 8;
    /** Bytes an atomic reads and returns ({@code MLX5_ATOMIC_SIZE}, rdma-core mlx5.h). */
    public static final int ATOMIC_SIZE = 8;

    private AtomicSeg() {
    }

    /** be64 swap_add, be64 compare: one bounds check, two 8-byte stores. */
    public static void set(MutableDirectBuffer buffer, int offset, long swapAdd, long compare) {
        Segments.put16(buffer, offset, swapAdd, compare);
    }

    /** ATOMIC_CS: write {@code swap} where the remote 8 bytes equal {@code compare}. */
    public static void compareSwap(MutableDirectBuffer buffer, int offset, long compare, long swap) {
        set(buffer, offset, swap, compare);
    }

    /**
     * ATOMIC_FA: add {@code add}. The compare field is unused; rdma-core leaves whatever the ring held there,
     * this writes 0 so WQEs are reproducible.
     */
    public static void fetchAdd(MutableDirectBuffer buffer, int offset, long add) {
        set(buffer, offset, add, 0L);
    }

    public static long swapAdd(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getLong(offset + SWAP_ADD_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static long compare(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getLong(offset + COMPARE_OFFSET, ByteOrder.BIG_ENDIAN);
    }
}
