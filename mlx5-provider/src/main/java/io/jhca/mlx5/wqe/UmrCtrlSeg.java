package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * UMR control segment of a memory window bind or invalidation ({@code struct mlx5_wqe_umr_ctrl_seg}, mlx5dv.h, 48
 * bytes): 0 u8 {@code flags}, 1..3 reserved, 4 be16 {@code klm_octowords}, 6 be16 {@code translation_offset}, 8
 * be64 {@code mkey_mask}, 16..47 reserved. Filled as rdma-core providers/mlx5/qp.c {@code set_umr_control_seg}
 * does: INLINE and TRANSLATION_OFFSET always; the mask names free and the key byte, plus the QPN for a type 2
 * window; a bind (length non-zero) carries one KLM padded to 4 (4 octowords), the span and the four access bits, and a type 2
 * bind checks that the key is free; an invalidation or unbind carries no KLM, and for type 2 checks the QPN.
 */
public final class UmrCtrlSeg {

    public static final int SIZE = 48;
    public static final int FLAGS_OFFSET = 0;
    public static final int KLM_OCTOWORDS_OFFSET = 4;
    public static final int TRANSLATION_OFFSET_OFFSET = 6;
    public static final int MKEY_MASK_OFFSET = 8;

    /** mlx5dv.h {@code MLX5_WQE_UMR_CTRL_FLAG_*}. */
    public static final int FLAG_INLINE = 1 << 7;
    public static final int FLAG_CHECK_FREE = 1 << 5;
    public static final int FLAG_TRANSLATION_OFFSET = 1 << 4;
    public static final int FLAG_CHECK_QPN = 1 << 3;

    /** mlx5dv.h {@code MLX5_WQE_UMR_CTRL_MKEY_MASK_*}. */
    public static final long MASK_LEN = 1L << 0;
    public static final long MASK_START_ADDR = 1L << 6;
    public static final long MASK_MKEY = 1L << 13;
    public static final long MASK_QPN = 1L << 14;
    public static final long MASK_ACCESS_LOCAL_WRITE = 1L << 18;
    public static final long MASK_ACCESS_REMOTE_READ = 1L << 19;
    public static final long MASK_ACCESS_REMOTE_WRITE = 1L << 20;
    public static final long MASK_ACCESS_ATOMIC = 1L << 21;
    public static final long MASK_FREE = 1L << 29;

    private UmrCtrlSeg() {
    }

    /** rdma-core qp.c {@code get_klm_octo(n)}: {@code ALIGN(n, 3) / 2}, i.e. 0 for none and 4 for one entry. */
    public static int klmOctowords(int entries) {
        return ((entries + 7) & ~7) / 2;
    }

    /**
     * @param type2  the window is of type 2
     * @param length the bind's length; 0 for an unbind or a LOCAL_INV
     */
    public static void set(MutableDirectBuffer buffer, int offset, boolean type2, long length) {
        Segments.checkBounds(buffer, offset, SIZE);
        int flags = FLAG_TRANSLATION_OFFSET | FLAG_INLINE;
        long mask = MASK_FREE | MASK_MKEY | (type2 ? MASK_QPN : 0);
        int octowords;
        if (length != 0) {
            octowords = klmOctowords(1);
            flags |= type2 ? FLAG_CHECK_FREE : 0;
            mask |= MASK_LEN | MASK_START_ADDR | MASK_ACCESS_LOCAL_WRITE | MASK_ACCESS_REMOTE_READ
                    | MASK_ACCESS_REMOTE_WRITE | MASK_ACCESS_ATOMIC;
        } else {
            octowords = klmOctowords(0);
            flags |= type2 ? FLAG_CHECK_QPN : 0;
        }
        buffer.setMemory(offset, SIZE, (byte) 0);
        buffer.putByte(offset + FLAGS_OFFSET, (byte) flags);
        buffer.putShort(offset + KLM_OCTOWORDS_OFFSET, (short) octowords, ByteOrder.BIG_ENDIAN);
        buffer.putLong(offset + MKEY_MASK_OFFSET, mask, ByteOrder.BIG_ENDIAN);
    }

    public static int flags(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + FLAGS_OFFSET) & 0xff;
    }

    public static int klmOctowords(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getShort(offset + KLM_OCTOWORDS_OFFSET, ByteOrder.BIG_ENDIAN) & 0xffff;
    }

    public static long mkeyMask(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getLong(offset + MKEY_MASK_OFFSET, ByteOrder.BIG_ENDIAN);
    }
}
