package io.jhca.mlx5.wqe;

import org.agrona.MutableDirectBuffer;

/**
 * A receive WQE: an array of {@link DataSeg}s, one per SGE, in a slot of {@code 1 << wqe_shift} bytes
 * (at least 16 * max_sge). When fewer than {@code max_sge} SGEs are used the next segment is a terminator:
 * byte_count 0, lkey {@code MLX5_INVALID_LKEY (0x100)}, addr 0 (rdma-core qp.c {@code mlx5_post_recv}).
 * No MMIO doorbell follows; only the RQ doorbell record is updated.
 */
public final class RecvWqeLayout {

    /** {@code MLX5_INVALID_LKEY} (mlx5dv.h): ends a receive scatter list. */
    public static final int INVALID_LKEY = 0x100;

    private RecvWqeLayout() {
    }

    /** Writes SGE number {@code index} of the WQE at {@code wqeOffset}. */
    public static void setSge(MutableDirectBuffer buffer, int wqeOffset, int index, int byteCount, int lkey, long addr) {
        DataSeg.set(buffer, segmentOffset(wqeOffset, index), byteCount, lkey, addr);
    }

    /** Writes the terminator after {@code used} SGEs if {@code used < maxSge}; a full WQE has none. */
    public static void finish(MutableDirectBuffer buffer, int wqeOffset, int used, int maxSge) {
        if (used < 0 || used > maxSge) {
            throw new IllegalArgumentException(used + " SGEs in a receive WQE of " + maxSge);
        }
        if (used < maxSge) {
            DataSeg.set(buffer, segmentOffset(wqeOffset, used), 0, INVALID_LKEY, 0L);
        }
    }

    /**
     * The WQE of a receive of one SGE in one call: its data segment, skipped when {@code byteCount} is 0 as
     * {@code mlx5_post_recv} skips an empty SGE, and the terminator when the WQE has room for one; the same bytes as
     * {@link #setSge} and {@link #finish}, after one bounds check.
     */
    public static void putOne(MutableDirectBuffer buffer, int wqeOffset, int byteCount, int lkey, long addr, int maxSge) {
        if (byteCount == 0) {
            finish(buffer, wqeOffset, 0, maxSge);
        } else if (maxSge > 1) {
            Segments.put32(buffer, wqeOffset, DataSeg.word0(byteCount, lkey), addr, DataSeg.word0(0, INVALID_LKEY), 0L);
        } else {
            DataSeg.put(buffer, wqeOffset, byteCount, lkey, addr);
        }
    }

    private static int segmentOffset(int wqeOffset, int index) {
        if (index < 0) {
            throw new IllegalArgumentException("SGE index " + index);
        }
        return wqeOffset + index * DataSeg.SIZE;
    }
}
