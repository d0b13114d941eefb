package io.jhca.mlx5.ring;

import io.jhca.doorbell.MmioWindow;

/**
 * The bfregs of the function's UAR page: bfreg 0 shared by every QP that has none of its own (each doorbell under
 * its lock), the others handed out one per QP while they last, to be rung without a lock. rdma-core does the same
 * for a QP of a thread domain or a low-latency bfreg ({@code mlx5_attach_dedicated_uar}, {@code need_lock = 0}).
 * A device without BlueFlame halves (non-cached UAR) has only bfreg 0.
 */
public final class BfregPool {

    private final Bfreg shared;
    private final Bfreg[] dedicated;
    private final boolean[] taken;

    /**
     * @param bar       BAR0
     * @param uar       the UAR index
     * @param bfRegSize {@code 1 << log_bf_reg_size}, 0 without BlueFlame halves
     * @param blueFlame whether the device takes BlueFlame copies
     */
    public BfregPool(MmioWindow bar, int uar, int bfRegSize, boolean blueFlame) {
        this.shared = new Bfreg(bar, uar, 0, bfRegSize, blueFlame, true);
        int n = Bfreg.perUarPage(bfRegSize) - 1;
        this.dedicated = new Bfreg[n];
        this.taken = new boolean[n];
        for (int i = 0; i < n; i++) {
            dedicated[i] = new Bfreg(bar, uar, i + 1, bfRegSize, blueFlame, false);
        }
    }

    /** The shared bfreg 0. */
    public Bfreg shared() {
        return shared;
    }

    /** A bfreg of the caller's own if one is free, else the shared one. */
    public synchronized Bfreg acquire() {
        for (int i = 0; i < dedicated.length; i++) {
            if (!taken[i]) {
                taken[i] = true;
                return dedicated[i];
            }
        }
        return shared;
    }

    /** Gives back what {@link #acquire} returned (the shared bfreg is never given back). */
    public synchronized void release(Bfreg bfreg) {
        for (int i = 0; i < dedicated.length; i++) {
            if (dedicated[i] == bfreg) {
                if (!taken[i]) {
                    throw new IllegalStateException("bfreg " + bfreg.index() + " released twice");
                }
                taken[i] = false;
                return;
            }
        }
    }

    /** Bfregs free to be handed out. */
    public synchronized int free() {
        int n = 0;
        for (boolean t : taken) {
            n += t ? 0 : 1;
        }
        return n;
    }
}
