package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Remote address segment of RDMA and atomic WQEs ({@code struct mlx5_wqe_raddr_seg}, mlx5dv.h, 16 bytes):
 * 0 be64 {@code raddr}, 8 be32 {@code rkey}, 12 be32 reserved (written 0). Filled as rdma-core qp.c
 * {@code set_raddr_seg} does.
 */
public final class RaddrSeg {

    public static final int SIZE = 16;
    public static final int RADDR_OFFSET = 0;
    public static final int RKEY_OFFSET = 8;
    public static final int RESERVED_OFFSET = 12;

    private RaddrSeg() {
    }

    public static void set(MutableDirectBuffer buffer, int offset, long raddr, int rkey) {
        put(buffer, offset, raddr, rkey);
    }

    /** {@link #set}: be64 raddr, be32 rkey, reserved 0, as one bounds check and two 8-byte stores. */
    public static void put(MutableDirectBuffer buffer, int offset, long raddr, int rkey) {
        Segments.put16(buffer, offset, raddr, word1(rkey));
    }

    /** Bytes 8..15 as one big-endian value: rkey, then 4 reserved bytes (bytes 0..7 are the raddr itself). */
    static long word1(int rkey) {
        return (long) rkey << 32;
    }

    public static long raddr(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getLong(offset + RADDR_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static int rkey(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + RKEY_OFFSET, ByteOrder.BIG_ENDIAN);
    }
}
