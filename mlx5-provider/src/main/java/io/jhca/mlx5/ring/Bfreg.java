package io.jhca.mlx5.ring;

import org.agrona.DirectBuffer;

import io.jhca.doorbell.BlueFlame;
import io.jhca.doorbell.DoorbellRecord;
import io.jhca.doorbell.MmioWindow;
import io.jhca.doorbell.UarDoorbell;

/**
 * The BlueFlame register all send queues of a device ring: bfreg 0 of the function's UAR page, at UAR + 0x800, two
 * halves of {@code bf_reg_size / 2} bytes used alternately. Shared by every QP, so each doorbell sequence (doorbell
 * record, MMIO store or BlueFlame copy, flush, toggle) runs under a lock, as rdma-core does for a shared bfreg
 * ({@code bf->need_lock}): two copies into one half would mix two WQEs. Uncontended, that lock costs one CAS.
 */
public final class Bfreg {

    private final UarDoorbell doorbell;
    private final BlueFlame blueFlame;

    /**
     * @param bar       BAR0
     * @param uar       the UAR index (page BAR0 + uar * 4096)
     * @param bfRegSize {@code 1 << log_bf_reg_size}; 0 for a device without BlueFlame halves (non-cached UAR)
     * @param blueFlame whether the device takes BlueFlame copies ({@code cmd_hca_cap.bf})
     */
    public Bfreg(MmioWindow bar, int uar, int bfRegSize, boolean blueFlame) {
        this.doorbell = bfRegSize > 0 ? UarDoorbell.bfreg(bar, uar * UarDoorbell.UAR_PAGE_SIZE, 0, bfRegSize)
                : new UarDoorbell(bar, uar * UarDoorbell.UAR_PAGE_SIZE + UarDoorbell.BF_OFFSET, 0);
        this.blueFlame = blueFlame && doorbell.bufSize() > 0 ? new BlueFlame(doorbell) : null;
    }

    /** Whether a WQE of {@code ds} units may go by BlueFlame on this register. */
    public boolean blueFlameFits(int ds) {
        return blueFlame != null && blueFlame.fits(ds);
    }

    /** post_send_db without BlueFlame: record := curPost, 8-byte doorbell of the control segment at {@code ctrl}. */
    public synchronized void ring(DoorbellRecord dbr, int curPost, DirectBuffer sq, int ctrl) {
        doorbell.ring(dbr, curPost, sq, ctrl);
    }

    /** post_send_db with BlueFlame: record := curPost, the whole WQE copied to the register. */
    public synchronized void blueFlame(DoorbellRecord dbr, int curPost, DirectBuffer sq, int sqStart, int sqEnd,
                                       int ctrl, int ds) {
        blueFlame.ring(dbr, curPost, sq, sqStart, sqEnd, ctrl, ds);
    }

    /** Offset in BAR0 of the half the next doorbell goes to. */
    public synchronized int nextDoorbellOffset() {
        return doorbell.currentOffset();
    }
}
