package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Scatter/gather data segment ({@code struct mlx5_wqe_data_seg}, mlx5dv.h, 16 bytes):
 * 0 be32 {@code byte_count}, 4 be32 {@code lkey}, 8 be64 {@code addr}; as {@code mlx5dv_set_data_seg} writes it.
 */
public final class DataSeg {

    public static final int SIZE = 16;
    public static final int BYTE_COUNT_OFFSET = 0;
    public static final int LKEY_OFFSET = 4;
    public static final int ADDR_OFFSET = 8;

    private DataSeg() {
    }

    /**
     * @param byteCount length in bytes, an unsigned 32-bit value
     * @param lkey      local key of the memory region
     * @param addr      virtual address (or IOVA) of the first byte
     */
    public static void set(MutableDirectBuffer buffer, int offset, int byteCount, int lkey, long addr) {
        put(buffer, offset, byteCount, lkey, addr);
    }

    /** {@link #set} for the send ring's hot path: one bounds check, two 8-byte stores. */
    public static void put(MutableDirectBuffer buffer, int offset, int byteCount, int lkey, long addr) {
        Segments.put16(buffer, offset, word0(byteCount, lkey), addr);
    }

    /** Bytes 0..7 as one big-endian value: byte_count, then lkey (bytes 8..15 are the address itself). */
    static long word0(int byteCount, int lkey) {
        return (long) byteCount << 32 | (lkey & 0xFFFFFFFFL);
    }

    public static int byteCount(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + BYTE_COUNT_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static int lkey(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + LKEY_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static long addr(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getLong(offset + ADDR_OFFSET, ByteOrder.BIG_ENDIAN);
    }
}
