package io.jhca.connectx;

import java.lang.invoke.VarHandle;

import io.jhca.doorbell.UarDoorbell;
import io.jhca.rxe.AdaptiveIdleStrategy;
import io.jhca.rxe.link.LinkSleep;

/**
 * Where the firmware thread of an in-process function sleeps once idle (the park phase of its adaptive idle
 * strategy): in ppoll(2) on the port's sockets and an eventfd, until a datagram arrives, the driver writes to BAR0
 * ({@link #afterMmioWrite}), another thread asks the firmware for something ({@link #wake}), or the model's next
 * timer is due (the health counter's tick, the rxe transport's retransmit and RNR timers, the command queue's scan).
 * Before, the thread parked 100 us at a time to look for doorbells it can only notice by reading memory: an idle
 * function took about 10% of a core.
 *
 * <p>The sleep is an rxe engine thread's ({@link LinkSleep}), with its handshake: the firmware raises a flag, then
 * looks for work once more; the driver stores its doorbell, then reads the flag. Each side needs a full barrier
 * between its store and its load, or both can miss the other (the doorbell unseen, no wake). The firmware's is
 * {@link Membarrier} (a barrier on every CPU of the process, paid only when it goes to sleep), so the driver's is a
 * compiler barrier only and a doorbell costs a load and a branch while the firmware is awake. Where membarrier is
 * missing the driver's side takes a full fence instead.
 */
final class ModelSleeper implements AdaptiveIdleStrategy.Sleeper {

    /** Whether the driver's side of the handshake may be a compiler barrier (membarrier works here). */
    private static final boolean ASYMMETRIC = Membarrier.AVAILABLE;

    private final ConnectXModel model;
    /** The sleep and its handshake, as an rxe engine thread's; the firmware's side is membarrier where it works. */
    private final LinkSleep sleep;

    ModelSleeper(ConnectXModel model) {
        this.model = model;
        this.sleep = new LinkSleep(model::link, model::doWork, model::nanosToNextTimer,
                ASYMMETRIC ? Membarrier::everyThread : LinkSleep::fullFence);
    }

    @Override
    public boolean sleep(long nanos) {
        return sleep.sleep(nanos);
    }

    /**
     * After a store of the driver's to BAR0 at {@code offset} (a doorbell, a command doorbell, an
     * initialization-segment register): wakes the firmware if it sleeps, unless the store is to a UAR page while the
     * data path is paused (nothing serves those doorbells then, and a benchmark rings them by the million). Any thread.
     */
    void afterMmioWrite(int offset) {
        if (ASYMMETRIC) {
            VarHandle.releaseFence();   // no instruction on x86-64: the JIT may not read the flag before the store
        } else {
            VarHandle.fullFence();
        }
        if (sleep.asleep() && (offset < UarDoorbell.UAR_PAGE_SIZE || !model.dataPathPaused())) {
            sleep.wakeNow();
        }
    }

    /** Wakes the firmware if it sleeps, after whatever this thread stored for it (a request). Any thread. */
    void wake() {
        sleep.wake();
    }

    /** The function is closing: ends a sleep now, and the firmware sleeps no more (its runner then stops it). */
    void stop() {
        sleep.stop();
    }

    /** On the firmware thread as it stops. */
    void close() {
        sleep.close();
    }

    /** How many times the firmware slept in the kernel, and how many of those a datagram or a wake cut short. */
    long[] sleepCounts() {
        return sleep.counts();
    }

    /** Whether the firmware thread sleeps (or is about to). */
    boolean asleep() {
        return sleep.asleep();
    }
}
