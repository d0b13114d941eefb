package io.jhca.doorbell;

import java.nio.ByteOrder;

import org.agrona.UnsafeApi;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * An mlx5 doorbell record: 8 bytes of host memory the HCA reads by DMA, two big-endian 32-bit words.
 *
 * <p>For a QP: word 0 ({@code MLX5_RCV_DBR}) holds the RQ producer counter, word 1 ({@code MLX5_SND_DBR})
 * the SQ producer counter ({@code cur_post}, in WQEBBs); both are 16-bit counters in a be32
 * (rdma-core qp.c: {@code htobe32(head & 0xffff)}). For a CQ: word 0 ({@code MLX5_CQ_SET_CI}) holds the
 * 24-bit consumer index, word 1 ({@code MLX5_CQ_ARM_DB}) the last arm word {@code sn<<28 | cmd | ci}
 * (rdma-core cq.c {@code update_cons_index}, {@code mlx5_arm_cq}; mlx5.h enum values).
 *
 * <p>Each word is written with one release store of the byte-swapped value: in program order after the
 * WQE stores, with no fence instruction of its own (the fences are the caller's, see {@link Fences}).
 * A flyweight: wrap once, reuse.
 */
public final class DoorbellRecord {

    /** Bytes in a record. rdma-core hands records out in 64-byte slots (dbrec.c); only these 8 are used. */
    public static final int SIZE = 8;
    /** QP: RQ producer counter ({@code MLX5_RCV_DBR = 0}, word 0). */
    public static final int RCV_OFFSET = 0;
    /** QP: SQ producer counter ({@code MLX5_SND_DBR = 1}, word 1). */
    public static final int SND_OFFSET = 4;
    /** CQ: consumer index ({@code MLX5_CQ_SET_CI = 0}, word 0). */
    public static final int CQ_SET_CI_OFFSET = 0;
    /** CQ: arm word ({@code MLX5_CQ_ARM_DB = 1}, word 1). */
    public static final int CQ_ARM_OFFSET = 4;

    private static final boolean NATIVE_BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;

    private UnsafeBuffer buffer;
    private int offset;

    /** Points this flyweight at the 8 bytes at {@code offset} of {@code buffer}; checked now, 8-byte aligned. */
    public DoorbellRecord wrap(UnsafeBuffer buffer, int offset) {
        if (offset < 0 || offset > buffer.capacity() - SIZE) {
            throw new IndexOutOfBoundsException("doorbell record [" + offset + ", +8) outside buffer of " + buffer.capacity());
        }
        if (((buffer.addressOffset() + offset) & 7) != 0) {
            throw new IllegalArgumentException("doorbell record at offset " + offset + " is not 8-byte aligned");
        }
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    /** QP: publishes the RQ producer counter; only its low 16 bits are stored, as be32. */
    public void setRecvCounter(int head) {
        putWord(RCV_OFFSET, head & 0xffff);
    }

    /** QP: publishes the SQ producer counter ({@code cur_post}, WQEBBs); low 16 bits, as be32. */
    public void setSendCounter(int curPost) {
        putWord(SND_OFFSET, curPost & 0xffff);
    }

    /** CQ: publishes the consumer index; low 24 bits, as be32. */
    public void setConsumerIndex(int consIndex) {
        putWord(CQ_SET_CI_OFFSET, consIndex & 0xffffff);
    }

    /** CQ: stores the arm word ({@link CqArm#armWord}) as be32. */
    public void setArmWord(int armWord) {
        putWord(CQ_ARM_OFFSET, armWord);
    }

    /**
     * The record's address, for a poller that stores the consumer index itself (a direct CQ, as rdma-core's
     * {@code update_cons_index}: one plain store). Valid while the record's memory is open; the caller checks that.
     */
    public long address() {
        return live().addressOffset() + offset;
    }

    /** QP: the RQ counter as stored (be32 decoded). */
    public int recvCounter() {
        return getWord(RCV_OFFSET);
    }

    /** QP: the SQ counter as stored (be32 decoded). */
    public int sendCounter() {
        return getWord(SND_OFFSET);
    }

    /** CQ: the consumer index as stored (be32 decoded). */
    public int consumerIndex() {
        return getWord(CQ_SET_CI_OFFSET);
    }

    /** CQ: the arm word as stored (be32 decoded). */
    public int armWord() {
        return getWord(CQ_ARM_OFFSET);
    }

    private void putWord(int wordOffset, int value) {
        UnsafeBuffer b = live();
        UnsafeApi.putIntRelease(b.byteArray(), b.addressOffset() + offset + wordOffset,
                NATIVE_BIG_ENDIAN ? value : Integer.reverseBytes(value));
    }

    private int getWord(int wordOffset) {
        UnsafeBuffer b = live();
        int raw = UnsafeApi.getIntVolatile(b.byteArray(), b.addressOffset() + offset + wordOffset);
        return NATIVE_BIG_ENDIAN ? raw : Integer.reverseBytes(raw);
    }

    /**
     * The buffer, after the one check every access needs: {@link #wrap} checked the offset, and the record's 8 bytes
     * lie within the buffer's capacity still unless its region has closed (a DMA region's view drops to capacity 0).
     * The accesses are then raw, not checked a second time by the buffer.
     */
    private UnsafeBuffer live() {
        UnsafeBuffer b = buffer;
        if (b == null) {
            throw new IllegalStateException("doorbell record not wrapped");
        }
        if (offset > b.capacity() - SIZE) {
            throw new IndexOutOfBoundsException("doorbell record [" + offset + ", +8) outside buffer of " + b.capacity()
                + " bytes (its memory was closed)");
        }
        return b;
    }
}
