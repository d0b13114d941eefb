package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The inline translation of a window bind: one KLM entry ({@code struct mlx5_wqe_umr_klm_seg}, mlx5dv.h, 16 bytes:
 * 0 be32 {@code byte_count}, 4 be32 {@code mkey}, 8 be64 {@code address}) padded with zeros to the 64 bytes rdma-core
 * providers/mlx5/qp.c {@code set_umr_data_seg} writes (room for 4 KLMs, the 4 octowords the UMR control segment
 * announces): the window's span in
 * the memory region whose lkey is {@code mkey}.
 */
public final class KlmSeg {

    public static final int ENTRY_SIZE = 16;
    /** What a bind WQE carries: the entry and zeros to 64 bytes. */
    public static final int SIZE = 64;
    public static final int BYTE_COUNT_OFFSET = 0;
    public static final int MKEY_OFFSET = 4;
    public static final int ADDRESS_OFFSET = 8;

    private KlmSeg() {
    }

    public static void set(MutableDirectBuffer buffer, int offset, int byteCount, int mkey, long address) {
        Segments.checkBounds(buffer, offset, SIZE);
        buffer.putInt(offset + BYTE_COUNT_OFFSET, byteCount, ByteOrder.BIG_ENDIAN);
        buffer.putInt(offset + MKEY_OFFSET, mkey, ByteOrder.BIG_ENDIAN);
        buffer.putLong(offset + ADDRESS_OFFSET, address, ByteOrder.BIG_ENDIAN);
        buffer.setMemory(offset + ENTRY_SIZE, SIZE - ENTRY_SIZE, (byte) 0);
    }

    public static int byteCount(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, ENTRY_SIZE);
        return buffer.getInt(offset + BYTE_COUNT_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static int mkey(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, ENTRY_SIZE);
        return buffer.getInt(offset + MKEY_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static long address(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, ENTRY_SIZE);
        return buffer.getLong(offset + ADDRESS_OFFSET, ByteOrder.BIG_ENDIAN);
    }
}
