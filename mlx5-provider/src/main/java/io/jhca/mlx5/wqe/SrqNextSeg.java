package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The first segment of every SRQ WQE ({@code struct mlx5_wqe_srq_next_seg}, mlx5dv.h, 16 bytes): 0 two reserved
 * bytes, 2 be16 {@code next_wqe_index}, 4 u8 {@code signature}, 11 reserved bytes; data segments follow. The WQEs
 * to post into form a list through {@code next_wqe_index}: the driver posts at its head and links free WQEs behind its
 * tail when the list runs out; the device, having used a WQE, goes on to the one it names (rdma-core srq.c).
 */
public final class SrqNextSeg {

    public static final int SIZE = 16;
    public static final int NEXT_WQE_INDEX_OFFSET = 2;
    public static final int SIGNATURE_OFFSET = 4;

    private SrqNextSeg() {
    }

    /** Writes the whole segment: the link, signature 0, reserved bytes 0. */
    public static void set(MutableDirectBuffer buffer, int offset, int nextWqeIndex) {
        Segments.checkBounds(buffer, offset, SIZE);
        buffer.setMemory(offset, SIZE, (byte) 0);
        buffer.putShort(offset + NEXT_WQE_INDEX_OFFSET, (short) nextWqeIndex, ByteOrder.BIG_ENDIAN);
    }

    /** Rewrites only the link (what rdma-core's set_next_tail stores into the tail WQE). */
    public static void setNext(MutableDirectBuffer buffer, int offset, int nextWqeIndex) {
        Segments.checkBounds(buffer, offset, SIZE);
        buffer.putShort(offset + NEXT_WQE_INDEX_OFFSET, (short) nextWqeIndex, ByteOrder.BIG_ENDIAN);
    }

    public static int next(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getShort(offset + NEXT_WQE_INDEX_OFFSET, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    public static int signature(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + SIGNATURE_OFFSET) & 0xff;
    }
}
