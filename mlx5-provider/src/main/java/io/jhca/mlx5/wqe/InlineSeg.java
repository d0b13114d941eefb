package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Inline data segment ({@code struct mlx5_wqe_inl_data_seg}, mlx5dv.h): a be32
 * {@code byte_count = length | MLX5_INLINE_SEG (0x80000000)} followed directly by the payload bytes.
 * It takes {@code align(length + 4, 16) / 16} DS (rdma-core qp.c {@code set_data_inl_seg}).
 *
 * <p>A WQE may run past the end of the send ring; the payload then continues at the ring's first byte
 * (rdma-core: {@code if (wqe + len > qend)} copy up to {@code qend}, go on at {@code mlx5_get_send_wqe(qp, 0)}).
 * The header itself never straddles the end: segments start on 16-byte boundaries.
 *
 * <p>Unlike rdma-core this writer zeroes the tail of the last 16-byte unit, so WQE bytes are reproducible.
 */
public final class InlineSeg {

    /** Flag in {@code byte_count} marking inline data ({@code MLX5_INLINE_SEG}). */
    public static final int INLINE_SEG = 0x80000000;
    /** Size of the header ({@code byte_count}). */
    public static final int HEADER_SIZE = 4;

    private InlineSeg() {
    }

    /** DS units an inline segment of {@code length} payload bytes takes; 0 for no payload (rdma-core then writes no segment). */
    public static int ds(int length) {
        if (length < 0) {
            throw new IllegalArgumentException("inline length " + length);
        }
        return length == 0 ? 0 : (length + HEADER_SIZE + SendWqeLayout.DS - 1) / SendWqeLayout.DS;
    }

    /** Writes the header {@code be32(length | 0x80000000)} at {@code offset}. */
    public static void setHeader(MutableDirectBuffer buffer, int offset, int length) {
        Segments.checkBounds(buffer, offset, HEADER_SIZE);
        Segments.checkField("inline length", length, Integer.MAX_VALUE);
        buffer.putInt(offset, length | INLINE_SEG, ByteOrder.BIG_ENDIAN);
    }

    /** Payload length from a header (0x80000000 flag removed). */
    public static int length(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, HEADER_SIZE);
        return buffer.getInt(offset, ByteOrder.BIG_ENDIAN) & ~INLINE_SEG;
    }

    /** Whether the 4 bytes at {@code offset} are an inline header (bit 31 of byte_count set). */
    public static boolean isInline(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, HEADER_SIZE);
        return (buffer.getByte(offset) & 0x80) != 0;
    }

    /**
     * Writes a whole inline segment for one source span: header, payload (wrapping at the ring end), zeroed
     * tail of the last DS.
     *
     * @param ring       buffer holding the send ring
     * @param ringStart  offset of the ring's first byte in {@code ring}
     * @param ringEnd    offset just past the ring's last byte; the ring is a whole number of WQEBBs
     * @param segOffset  where the segment starts: inside the ring, on a 16-byte boundary from {@code ringStart}
     * @param src        payload source
     * @param srcOffset  payload offset in {@code src}
     * @param length     payload bytes, at most the ring size minus the header
     * @return DS units used ({@link #ds(int)}); 0 and nothing written when {@code length == 0}
     */
    public static int write(MutableDirectBuffer ring, int ringStart, int ringEnd, int segOffset,
                            DirectBuffer src, int srcOffset, int length) {
        checkRing(ring, ringStart, ringEnd, segOffset);
        if (length < 0 || length > ringEnd - ringStart - HEADER_SIZE) {
            throw new IllegalArgumentException("inline length " + length + " does not fit a ring of " + (ringEnd - ringStart));
        }
        if (srcOffset < 0 || srcOffset > src.capacity() - length) {
            throw new IndexOutOfBoundsException("inline source [" + srcOffset + ", +" + length + ") outside buffer of " + src.capacity());
        }
        if (length == 0) {
            return 0;
        }
        int end = copyWrapped(ring, ringStart, ringEnd, segOffset + HEADER_SIZE, src, srcOffset, length);
        int pad = -(end - ringStart) & (SendWqeLayout.DS - 1);
        ring.setMemory(end, pad, (byte) 0);
        ring.putInt(segOffset, length | INLINE_SEG, ByteOrder.BIG_ENDIAN);
        return ds(length);
    }

    /**
     * Copies {@code length} payload bytes to {@code dst} in the ring, continuing at {@code ringStart} at the
     * ring end; returns the offset just past the last byte (wrapped). Building block for gathering several
     * SGEs into one inline segment, followed by {@link #setHeader} with the total.
     */
    public static int copyWrapped(MutableDirectBuffer ring, int ringStart, int ringEnd, int dst,
                                  DirectBuffer src, int srcOffset, int length) {
        if (ringStart < 0 || ringEnd > ring.capacity() || ringStart >= ringEnd || dst < ringStart || dst > ringEnd
            || length < 0 || length > ringEnd - ringStart) {
            throw new IllegalArgumentException("inline copy of " + length + " bytes at " + dst + " outside ring ["
                + ringStart + ", " + ringEnd + ")");
        }
        if (srcOffset < 0 || srcOffset > src.capacity() - length) {
            throw new IndexOutOfBoundsException("inline source [" + srcOffset + ", +" + length + ") outside buffer of " + src.capacity());
        }
        int first = Math.min(length, ringEnd - dst);
        ring.putBytes(dst, src, srcOffset, first);
        if (first == length) {
            return dst + first;
        }
        int rest = length - first;
        ring.putBytes(ringStart, src, srcOffset + first, rest);
        return ringStart + rest;
    }

    private static void checkRing(MutableDirectBuffer ring, int ringStart, int ringEnd, int segOffset) {
        if (ringStart < 0 || ringEnd > ring.capacity() || ringStart >= ringEnd
            || ((ringEnd - ringStart) & (SendWqeLayout.WQEBB - 1)) != 0) {
            throw new IllegalArgumentException("ring [" + ringStart + ", " + ringEnd + ") is not whole WQEBBs inside a buffer of "
                + ring.capacity());
        }
        if (segOffset < ringStart || segOffset >= ringEnd || ((segOffset - ringStart) & (SendWqeLayout.DS - 1)) != 0) {
            throw new IllegalArgumentException("inline segment at " + segOffset + " not on a 16-byte unit of ring ["
                + ringStart + ", " + ringEnd + ")");
        }
    }
}
