package io.jhca.doorbell;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The lock of a bfreg that several send queues share (rdma-core's {@code bf->lock} when {@code bf->need_lock}):
 * the doorbell sequence from the MMIO store to the half switch runs under it, so two doorbells never mix in one
 * half and reach the device in lock order ({@code mmio_flush_writes} inside the lock, qp.c {@code post_send_db}).
 *
 * <p>Taking it is one locked compare-and-set ({@code lock cmpxchg} on x86 HotSpot), which drains every earlier
 * store exactly as {@link Fences#doorbellRecordBeforeMmio()}'s {@code lock addl} does, and as a volatile access it
 * keeps the doorbell record store before it and the MMIO stores after it. So, as rdma-core's
 * {@code mmio_wc_spinlock} (util/udma_barrier.h: "the lock is the barrier" on x86), {@link #lockAsMmioFence()} is
 * that fence: a shared bfreg pays one locked instruction for lock and fence together, not two. A bfreg owned by
 * one send queue needs no lock at all (rdma-core's dedicated bfreg, {@code need_lock = 0}).
 */
public final class DoorbellLock {

    private static final VarHandle HELD;
    private static final int SPINS_BEFORE_YIELD = 100;

    static {
        try {
            HELD = MethodHandles.lookup().findVarHandle(DoorbellLock.class, "held", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through HELD
    private volatile int held;

    /** Takes the lock; its successful compare-and-set is {@link Fences#doorbellRecordBeforeMmio()}. */
    public void lockAsMmioFence() {
        int spins = 0;
        while (!HELD.compareAndSet(this, 0, 1)) {
            if (++spins < SPINS_BEFORE_YIELD) {
                Thread.onSpinWait();
            } else {
                Thread.yield();   // the holder may have lost its CPU: a doorbell sequence is a few stores
            }
        }
    }

    /** Releases the lock: a release store, after the flush and the half switch. */
    public void unlock() {
        HELD.setRelease(this, 0);
    }

    /** Whether some thread holds the lock (diagnostics and tests). */
    public boolean held() {
        return (int) HELD.getAcquire(this) != 0;
    }
}
