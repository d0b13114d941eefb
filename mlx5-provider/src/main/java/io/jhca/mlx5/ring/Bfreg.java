package io.jhca.mlx5.ring;

import org.agrona.DirectBuffer;

import io.jhca.doorbell.BlueFlame;
import io.jhca.doorbell.DoorbellLock;
import io.jhca.doorbell.DoorbellRecord;
import io.jhca.doorbell.MmioWindow;
import io.jhca.doorbell.UarDoorbell;

/**
 * A BlueFlame register send queues ring: bfreg {@code index} of the function's UAR page, at UAR + 0x800 +
 * index * bf_reg_size, two halves of {@code bf_reg_size / 2} bytes used alternately.
 *
 * <p>A shared bfreg (several QPs) runs each doorbell sequence under a {@link DoorbellLock}, as rdma-core does when
 * {@code bf->need_lock}: two copies into one half would mix two WQEs. Taking that lock is also the
 * doorbell-record-before-MMIO fence ({@code mmio_wc_spinlock}), so sharing costs one locked instruction, not two. A
 * dedicated bfreg (one QP, rdma-core's low-latency / thread-domain bfreg, {@code need_lock = 0}) takes no lock:
 * its send queue is the only writer.
 */
public final class Bfreg {

    private final UarDoorbell doorbell;
    private final BlueFlame blueFlame;
    private final DoorbellLock lock;
    private final int index;

    /** bfreg 0, shared: what every QP without a bfreg of its own rings. */
    public Bfreg(MmioWindow bar, int uar, int bfRegSize, boolean blueFlame) {
        this(bar, uar, 0, bfRegSize, blueFlame, true);
    }

    /**
     * @param bar       BAR0
     * @param uar       the UAR index (page BAR0 + uar * 4096)
     * @param index     the bfreg in that page (0 for a device without BlueFlame halves)
     * @param bfRegSize {@code 1 << log_bf_reg_size}; 0 for a device without BlueFlame halves (non-cached UAR)
     * @param blueFlame whether the device takes BlueFlame copies ({@code cmd_hca_cap.bf})
     * @param shared    whether several send queues ring it (then each doorbell takes its lock)
     */
    public Bfreg(MmioWindow bar, int uar, int index, int bfRegSize, boolean blueFlame, boolean shared) {
        if (bfRegSize == 0 && index != 0) {
            throw new IllegalArgumentException("a UAR without BlueFlame halves has only bfreg 0, not " + index);
        }
        this.doorbell = bfRegSize > 0 ? UarDoorbell.bfreg(bar, uar * UarDoorbell.UAR_PAGE_SIZE, index, bfRegSize)
                : new UarDoorbell(bar, uar * UarDoorbell.UAR_PAGE_SIZE + UarDoorbell.BF_OFFSET, 0);
        this.blueFlame = blueFlame && doorbell.bufSize() > 0 ? new BlueFlame(doorbell) : null;
        this.lock = shared ? new DoorbellLock() : null;
        this.index = index;
    }

    /** Bfregs a UAR page holds for a device with this {@code bf_reg_size} (1 without BlueFlame halves). */
    public static int perUarPage(int bfRegSize) {
        return bfRegSize > 0 ? (UarDoorbell.UAR_PAGE_SIZE - UarDoorbell.BF_OFFSET) / bfRegSize : 1;
    }

    public int index() {
        return index;
    }

    public boolean shared() {
        return lock != null;
    }

    /** Whether a WQE of {@code ds} units may go by BlueFlame on this register. */
    public boolean blueFlameFits(int ds) {
        return blueFlame != null && blueFlame.fits(ds);
    }

    /** post_send_db without BlueFlame: record := curPost, 8-byte doorbell of the control segment at {@code ctrl}. */
    public void ring(DoorbellRecord dbr, int curPost, DirectBuffer sq, int ctrl) {
        if (lock == null) {
            doorbell.ring(dbr, curPost, sq, ctrl);
        } else {
            doorbell.ringShared(dbr, curPost, sq, ctrl, lock);
        }
    }

    /** As {@link #ring(DoorbellRecord, int, DirectBuffer, int)}, with the control segment's first word already known. */
    public void ring(DoorbellRecord dbr, int curPost, long ctrlWord) {
        if (lock == null) {
            doorbell.ring(dbr, curPost, ctrlWord);
        } else {
            doorbell.ringShared(dbr, curPost, ctrlWord, lock);
        }
    }

    /** post_send_db with BlueFlame: record := curPost, the whole WQE copied to the register. */
    public void blueFlame(DoorbellRecord dbr, int curPost, DirectBuffer sq, int sqStart, int sqEnd, int ctrl, int ds) {
        if (lock == null) {
            blueFlame.ring(dbr, curPost, sq, sqStart, sqEnd, ctrl, ds);
        } else {
            blueFlame.ringShared(dbr, curPost, sq, sqStart, sqEnd, ctrl, ds, lock);
        }
    }

    /** Offset in BAR0 of the half the next doorbell goes to. */
    public int nextDoorbellOffset() {
        if (lock == null) {
            return doorbell.currentOffset();
        }
        lock.lockAsMmioFence();
        try {
            return doorbell.currentOffset();
        } finally {
            lock.unlock();
        }
    }
}
