package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Memory key context segment of a UMR WQE ({@code struct mlx5_wqe_mkey_context_seg}, mlx5dv.h, 64 bytes): 0 u8
 * {@code free}, 2 u8 {@code access_flags}, 4 be32 {@code qpn_mkey}, 12 be32 {@code flags_pd}, 16 be64
 * {@code start_addr}, 24 be64 {@code len}, the rest reserved or unused by a window bind (written 0). Filled as
 * rdma-core providers/mlx5/qp.c {@code set_umr_mkey_seg} does: qpn_mkey = the new key byte with, above it, the QPN
 * of a type 2 bind or 0xffffff (type 1, and any unbind or invalidation); a bind sets the access bits, the start
 * address and the length; an unbind or invalidation sets only {@code free}.
 */
public final class MkeyContextSeg {

    public static final int SIZE = 64;
    public static final int FREE_OFFSET = 0;
    public static final int ACCESS_FLAGS_OFFSET = 2;
    public static final int QPN_MKEY_OFFSET = 4;
    public static final int FLAGS_PD_OFFSET = 12;
    public static final int START_ADDR_OFFSET = 16;
    public static final int LEN_OFFSET = 24;

    /** mlx5dv.h {@code MLX5_WQE_MKEY_CONTEXT_FREE}. */
    public static final int FREE = 1 << 6;
    /** mlx5dv.h {@code MLX5_WQE_MKEY_CONTEXT_ACCESS_FLAGS_*}. */
    public static final int ACCESS_ATOMIC = 1 << 6;
    public static final int ACCESS_REMOTE_WRITE = 1 << 5;
    public static final int ACCESS_REMOTE_READ = 1 << 4;
    public static final int ACCESS_LOCAL_WRITE = 1 << 3;
    public static final int ACCESS_LOCAL_READ = 1 << 2;

    private MkeyContextSeg() {
    }

    /** The segment's access bits for verbs access flags (set_umr_mkey_seg; local read is implied). */
    public static int accessFlagsOf(int verbsAccess) {
        return ((verbsAccess & 1) != 0 ? ACCESS_LOCAL_WRITE : 0)        // IBV_ACCESS_LOCAL_WRITE
                | ((verbsAccess & 2) != 0 ? ACCESS_REMOTE_WRITE : 0)    // IBV_ACCESS_REMOTE_WRITE
                | ((verbsAccess & 4) != 0 ? ACCESS_REMOTE_READ : 0)     // IBV_ACCESS_REMOTE_READ
                | ((verbsAccess & 8) != 0 ? ACCESS_ATOMIC : 0);         // IBV_ACCESS_REMOTE_ATOMIC
    }

    /** Verbs access flags of the segment's access bits (the model's view of a bind). */
    public static int verbsAccessOf(int accessFlags) {
        return ((accessFlags & ACCESS_LOCAL_WRITE) != 0 ? 1 : 0) | ((accessFlags & ACCESS_REMOTE_WRITE) != 0 ? 2 : 0)
                | ((accessFlags & ACCESS_REMOTE_READ) != 0 ? 4 : 0) | ((accessFlags & ACCESS_ATOMIC) != 0 ? 8 : 0);
    }

    /**
     * @param type2       the window is of type 2
     * @param newKey      the window's new rkey (only its low 8 bits go into the segment)
     * @param qpn         the binding QP
     * @param accessFlags {@code ACCESS_*} bits
     * @param length      0 for an unbind or an invalidation
     */
    public static void set(MutableDirectBuffer buffer, int offset, boolean type2, int newKey, int qpn, int accessFlags,
            long startAddr, long length) {
        Segments.checkBounds(buffer, offset, SIZE);
        buffer.setMemory(offset, SIZE, (byte) 0);
        int high = !type2 || length == 0 ? 0xFFFFFF00 : qpn << 8;
        buffer.putInt(offset + QPN_MKEY_OFFSET, (newKey & 0xff) | high, ByteOrder.BIG_ENDIAN);
        if (length != 0) {
            buffer.putByte(offset + ACCESS_FLAGS_OFFSET, (byte) accessFlags);
            buffer.putLong(offset + START_ADDR_OFFSET, startAddr, ByteOrder.BIG_ENDIAN);
            buffer.putLong(offset + LEN_OFFSET, length, ByteOrder.BIG_ENDIAN);
        } else {
            buffer.putByte(offset + FREE_OFFSET, (byte) FREE);
        }
    }

    public static int free(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + FREE_OFFSET) & 0xff;
    }

    public static int accessFlags(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getByte(offset + ACCESS_FLAGS_OFFSET) & 0xff;
    }

    public static int qpnMkey(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getInt(offset + QPN_MKEY_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static long startAddr(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getLong(offset + START_ADDR_OFFSET, ByteOrder.BIG_ENDIAN);
    }

    public static long length(DirectBuffer buffer, int offset) {
        Segments.checkBounds(buffer, offset, SIZE);
        return buffer.getLong(offset + LEN_OFFSET, ByteOrder.BIG_ENDIAN);
    }
}
