package io.jhca.doorbell;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.UnsafeApi;

/**
 * One mlx5 BlueFlame register ("bfreg") of a UAR page, used for the plain 8-byte send doorbell.
 *
 * <p>Layout (kernel include/linux/mlx5/doorbell.h, rdma-core mlx5.h {@code MLX5_BF_OFFSET}): bfreg {@code k}
 * of a UAR page sits at {@code 0x800 + k * bf_reg_size}; each bfreg is two halves of
 * {@code buf_size = bf_reg_size / 2} bytes used alternately ({@code bf->offset ^= bf->buf_size} after every
 * doorbell, rdma-core qp.c {@code post_send_db}), so consecutive doorbells never combine into one
 * write-combining burst. A non-cached (NC) UAR, the only kind vfio gives, has {@code buf_size = 0}: every
 * doorbell goes to the same address.
 *
 * <p>The doorbell itself is the first 8 bytes of the last WQE's control segment ({@code opmod_idx_opcode},
 * {@code qpn_ds}), copied big-endian as one 8-byte store ({@code mmio_write64_be}).
 *
 * <p>Single writer: one send queue per bfreg ({@link #ring}, rdma-core's dedicated bfreg, no lock). A bfreg several
 * send queues share is rung with {@link #ringShared}, under its {@link DoorbellLock} from the MMIO store through the
 * flush, as rdma-core does for {@code bf->need_lock}.
 */
public final class UarDoorbell {

    /** Offset of the first bfreg in a UAR page ({@code MLX5_BF_OFFSET}, rdma-core mlx5.h). */
    public static final int BF_OFFSET = 0x800;
    /** Size of a UAR page (kernel uar.c: UAR n = BAR0 + n * 4 KiB). */
    public static final int UAR_PAGE_SIZE = 4096;

    private static final boolean NATIVE_BIG_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN;

    private final MmioWindow uar;
    private final int regOffset;
    private final int bufSize;
    private int half;

    /**
     * @param uar       window containing the bfreg
     * @param regOffset offset of the bfreg in {@code uar} (e.g. {@code uarPage + 0x800 + k * bf_reg_size})
     * @param bufSize   size of one half ({@code bf_reg_size / 2}), or 0 for a non-cached UAR
     */
    public UarDoorbell(MmioWindow uar, int regOffset, int bufSize) {
        if (bufSize < 0 || (bufSize != 0 && (Integer.bitCount(bufSize) != 1 || bufSize < MmioWindow.CHUNK))) {
            throw new IllegalArgumentException("bfreg half size " + bufSize + " is not 0 or a power of two >= 64");
        }
        int span = bufSize == 0 ? 8 : 2 * bufSize;
        if (regOffset < 0 || (regOffset & (bufSize == 0 ? 7 : MmioWindow.CHUNK - 1)) != 0 || regOffset > uar.length() - span) {
            throw new IllegalArgumentException("bfreg at 0x" + Integer.toHexString(regOffset) + " (+" + span
                + ") is misaligned or outside the UAR window of 0x" + Integer.toHexString(uar.length()) + " bytes");
        }
        this.uar = uar;
        this.regOffset = regOffset;
        this.bufSize = bufSize;
    }

    /**
     * The bfreg {@code index} of the UAR page at {@code uarPageOffset} in {@code uar}, for a device whose
     * {@code bf_reg_size} ({@code 1 << log_bf_reg_size}, typically 512) is given.
     */
    public static UarDoorbell bfreg(MmioWindow uar, int uarPageOffset, int index, int bfRegSize) {
        if (index < 0 || bfRegSize <= 0 || BF_OFFSET + (long) (index + 1) * bfRegSize > UAR_PAGE_SIZE) {
            throw new IllegalArgumentException("bfreg " + index + " of size " + bfRegSize + " does not fit in a UAR page");
        }
        return new UarDoorbell(uar, uarPageOffset + BF_OFFSET + index * bfRegSize, bfRegSize / 2);
    }

    /**
     * Rings the send doorbell for the WQE(s) just written, rdma-core {@code post_send_db} without BlueFlame:
     * fence, doorbell record := {@code curPost}, fence, one 8-byte store of the control segment's first 8
     * bytes at {@code ctrlOffset} of {@code sq}, flush, switch halves.
     *
     * @param dbr        the QP's doorbell record
     * @param curPost    producer counter after the last WQE, in WQEBBs (low 16 bits are published)
     * @param sq         the send ring
     * @param ctrlOffset offset of the control segment of the last WQE posted
     */
    public void ring(DoorbellRecord dbr, int curPost, DirectBuffer sq, int ctrlOffset) {
        ring(dbr, curPost, ctrlWord(sq, ctrlOffset));   // WQE bytes are big-endian
    }

    /** As {@link #ring(DoorbellRecord, int, DirectBuffer, int)}, with the control word already read (big-endian value). */
    public void ring(DoorbellRecord dbr, int curPost, long ctrlWord) {
        Fences.wqeBeforeDoorbellRecord();
        dbr.setSendCounter(curPost);
        // the record before the MMIO store, and the store pushed out: fences only where the mapping needs them
        uar.putDoorbellBe(regOffset + half, ctrlWord);
        half ^= bufSize;
    }

    /**
     * As {@link #ring(DoorbellRecord, int, long)} on a bfreg several send queues share: the MMIO store, its flush and
     * the half switch under {@code lock}, whose acquisition is {@link Fences#doorbellRecordBeforeMmio()}
     * (rdma-core {@code mmio_wc_spinlock}, see {@link DoorbellLock}).
     */
    public void ringShared(DoorbellRecord dbr, int curPost, DirectBuffer sq, int ctrlOffset, DoorbellLock lock) {
        ringShared(dbr, curPost, ctrlWord(sq, ctrlOffset), lock);
    }

    /** As {@link #ringShared(DoorbellRecord, int, DirectBuffer, int, DoorbellLock)}, with the control word already read. */
    public void ringShared(DoorbellRecord dbr, int curPost, long ctrlWord, DoorbellLock lock) {
        Fences.wqeBeforeDoorbellRecord();
        dbr.setSendCounter(curPost);
        lock.lockAsMmioFence();
        try {
            uar.putDoorbellBe(regOffset + half, ctrlWord);   // ordered after the lock's locked instruction
            half ^= bufSize;
        } finally {
            lock.unlock();
        }
    }

    /** Offset in the window the next doorbell or BlueFlame copy goes to ({@code bf->reg + bf->offset}). */
    public int currentOffset() {
        return regOffset + half;
    }

    /** Offset of the bfreg (its first half) in the window. */
    public int regOffset() {
        return regOffset;
    }

    /** Size of one half; 0 for a non-cached UAR. */
    public int bufSize() {
        return bufSize;
    }

    MmioWindow window() {
        return uar;
    }

    void toggle() {
        half ^= bufSize;
    }

    /**
     * The first 8 bytes of the control segment at {@code ctrlOffset}, as a big-endian value (WQE bytes are
     * big-endian): checked once against the ring as it is now (its capacity drops to 0 if its memory closed), then
     * read raw.
     */
    private static long ctrlWord(DirectBuffer sq, int ctrlOffset) {
        if (ctrlOffset < 0 || ctrlOffset > sq.capacity() - 8) {
            throw new IndexOutOfBoundsException("control segment at " + ctrlOffset + " outside send ring of " + sq.capacity());
        }
        long raw = UnsafeApi.getLong(sq.byteArray(), sq.addressOffset() + ctrlOffset);
        return NATIVE_BIG_ENDIAN ? raw : Long.reverseBytes(raw);
    }
}
