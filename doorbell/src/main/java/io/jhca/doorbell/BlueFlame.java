package io.jhca.doorbell;

import org.agrona.DirectBuffer;

/**
 * BlueFlame: the whole WQE written through the bfreg together with the doorbell, so the HCA need not
 * fetch it by DMA (rdma-core qp.c {@code post_send_db} / {@code mlx5_bf_copy}).
 *
 * <p>The copy is {@code align(ds * 16, 64)} bytes in 64-byte chunks, each as eight 8-byte stores
 * ({@link MmioWindow#putChunk64}), into the bfreg's current half; the source wraps to the ring start when it
 * reaches the ring end, as a WQE may run past it. Afterwards the halves switch ({@code offset ^= buf_size}).
 *
 * <p>Only worth it on a write-combining mapping (sysfs {@code resource0_wc}); vfio maps BARs uncached, where
 * {@link UarDoorbell#ring} is the doorbell to use. Same single-writer rule as {@link UarDoorbell}.
 */
public final class BlueFlame {

    /** Bytes in a data-segment unit ("DS", {@code MLX5_SEND_WQE_DS}). */
    public static final int DS_BYTES = 16;

    private final UarDoorbell reg;
    private final MmioWindow uar;

    public BlueFlame(UarDoorbell reg) {
        if (reg.bufSize() == 0) {
            throw new IllegalArgumentException("a non-cached UAR (buf_size 0) has no BlueFlame buffer");
        }
        this.reg = reg;
        this.uar = reg.window();
    }

    /** Whether a WQE of {@code ds} 16-byte units may go by BlueFlame: {@code ds > 1 && ds <= buf_size / 16} (post_send_db). */
    public boolean fits(int ds) {
        return ds > 1 && ds <= reg.bufSize() / DS_BYTES;
    }

    /**
     * Rings the send doorbell with a BlueFlame copy of the single WQE at {@code wqeOffset}: fence, doorbell
     * record := {@code curPost}, fence, copy, flush, switch halves.
     *
     * @param dbr       the QP's doorbell record
     * @param curPost   producer counter after this WQE, in WQEBBs (low 16 bits are published)
     * @param sq        buffer holding the send ring
     * @param sqStart   offset of the ring's first WQEBB in {@code sq}
     * @param sqEnd     offset just past the ring's last WQEBB
     * @param wqeOffset offset of the WQE (its control segment), a WQEBB boundary inside the ring
     * @param ds        WQE size in 16-byte units, as in its control segment; must satisfy {@link #fits}
     */
    public void ring(DoorbellRecord dbr, int curPost, DirectBuffer sq, int sqStart, int sqEnd, int wqeOffset, int ds) {
        ring(dbr, curPost, sq, sqStart, sqEnd, wqeOffset, ds, null);
    }

    /**
     * As {@link #ring(DoorbellRecord, int, DirectBuffer, int, int, int, int)} on a bfreg several send queues share:
     * the copy, its flush and the half switch under {@code lock}, whose acquisition is
     * {@link Fences#doorbellRecordBeforeMmio()} (rdma-core {@code mmio_wc_spinlock}, see {@link DoorbellLock}).
     */
    public void ringShared(DoorbellRecord dbr, int curPost, DirectBuffer sq, int sqStart, int sqEnd, int wqeOffset,
                           int ds, DoorbellLock lock) {
        if (lock == null) {
            throw new IllegalArgumentException("a shared bfreg needs its lock");
        }
        ring(dbr, curPost, sq, sqStart, sqEnd, wqeOffset, ds, lock);
    }

    private void ring(DoorbellRecord dbr, int curPost, DirectBuffer sq, int sqStart, int sqEnd, int wqeOffset, int ds,
                      DoorbellLock lock) {
        if (!fits(ds)) {
            throw new IllegalArgumentException("WQE of " + ds + " DS does not fit a BlueFlame half of " + reg.bufSize() + " bytes");
        }
        if (sqStart < 0 || sqEnd > sq.capacity() || sqStart >= sqEnd
            || ((sqEnd - sqStart) & (MmioWindow.CHUNK - 1)) != 0
            || wqeOffset < sqStart || wqeOffset >= sqEnd || ((wqeOffset - sqStart) & (MmioWindow.CHUNK - 1)) != 0) {
            throw new IllegalArgumentException("WQE at " + wqeOffset + " not on a WQEBB of ring [" + sqStart + ", " + sqEnd
                + ") in a buffer of " + sq.capacity());
        }
        int bytes = (ds * DS_BYTES + MmioWindow.CHUNK - 1) & -MmioWindow.CHUNK;

        Fences.wqeBeforeDoorbellRecord();
        dbr.setSendCounter(curPost);
        if (lock == null) {
            Fences.doorbellRecordBeforeMmio();
        } else {
            lock.lockAsMmioFence();
        }
        try {
            int dst = reg.currentOffset();
            int src = wqeOffset;
            for (int done = 0; done < bytes; done += MmioWindow.CHUNK) {
                uar.putChunk64(dst + done, sq, src);
                src += MmioWindow.CHUNK;
                if (src == sqEnd) {
                    src = sqStart;   // the WQE continues at slot 0
                }
            }
            Fences.flushMmio();
            reg.toggle();
        } finally {
            if (lock != null) {
                lock.unlock();
            }
        }
    }
}
