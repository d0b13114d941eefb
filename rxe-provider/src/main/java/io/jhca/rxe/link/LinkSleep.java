package io.jhca.rxe.link;

import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.IntSupplier;
import java.util.function.LongUnaryOperator;
import java.util.function.Supplier;

/**
 * Where a thread that drives a link sleeps once idle: in ppoll(2) on the link's sockets and an eventfd
 * ({@link KernelWait}), until a datagram arrives, another thread wakes it after publishing work for it, its next
 * timer is due, or the sleep's bound passes. An rxe engine thread sleeps here, and so does the firmware thread of an
 * in-process ConnectX model.
 *
 * <p>The handshake with the threads that publish work is Dekker's: the sleeper raises {@link #asleep()}, takes a
 * barrier, then looks for work once more ({@code lastLook}); a waker publishes its work, takes its own barrier, then
 * reads the flag and, if raised, calls {@link #wakeNow()}. Each side needs a full barrier between its store and its
 * load, or both can miss the other (the work unseen, no wake). Which barriers is the owner's choice: a full fence on
 * both sides, or a barrier on every CPU of the process on the sleeper's side ({@code membarrier(2)}) and only a
 * compiler barrier on the waker's. The sleeper's barrier says whether it was whole; if not, the sleep is kept to
 * {@link KernelWait#PARK_CAP_NANOS}, the longest a racing wake may then go unseen.
 *
 * <p>The eventfd is opened at the first sleep and closed by {@link #close}; where it cannot be opened the thread
 * parks, briefly. One sleeping thread; any thread may wake it or stop it.
 */
public final class LinkSleep {

    private final Supplier<Link> link;
    private final IntSupplier lastLook;
    private final LongUnaryOperator nanosToNextTimer;
    private final BooleanSupplier barrier;
    private volatile KernelWait kernelWait;
    private boolean kernelWaitRefused;
    private volatile boolean sleeping;
    private volatile boolean stopped;
    /** Sleeps in the kernel, and how many of them a datagram or a wake ended early (the sleeping thread writes). */
    private volatile long sleeps;
    private volatile long earlyWakes;

    /**
     * @param link             the sockets a datagram on which ends the sleep (asked at each sleep: an owner may make
     *                         its link after this)
     * @param lastLook         one more look for work after the flag is raised (a duty cycle): how much it found
     * @param nanosToNextTimer nanoseconds from the given {@code System.nanoTime()} until the owner's next timer, or
     *                         Long.MAX_VALUE if none
     * @param barrier          the sleeper's side of the handshake, taken between raising the flag and the last look;
     *                         true if it is a full barrier for the wakers' side as the owner takes it
     */
    public LinkSleep(final Supplier<Link> link, final IntSupplier lastLook, final LongUnaryOperator nanosToNextTimer,
            final BooleanSupplier barrier) {
        this.link = link;
        this.lastLook = lastLook;
        this.nanosToNextTimer = nanosToNextTimer;
        this.barrier = barrier;
    }

    /** The plain handshake: a full fence on the sleeper's side, as the wakers must take on theirs. */
    public static boolean fullFence() {
        java.lang.invoke.VarHandle.fullFence();
        return true;
    }

    /**
     * Sleeps up to {@code nanos}, unless the last look finds work (then returns true at once), the owner's timer is
     * due, or the sleeper was stopped. Returns false otherwise, whether or not something ended the sleep early: the
     * owner's next duty cycle does what woke it.
     */
    public boolean sleep(final long nanos) {
        if (stopped) {
            return false;
        }
        KernelWait w = kernelWait;
        if (w == null && !kernelWaitRefused) {
            try {
                w = KernelWait.open();
                kernelWait = w;
            } catch (final RuntimeException | LinkageError e) {
                kernelWaitRefused = true;   // no eventfd here: park, briefly
            }
        }
        if (w == null) {   // nothing can end a park early: keep it short, and not past the next timer
            final long timer = nanosToNextTimer.applyAsLong(System.nanoTime());
            LockSupport.parkNanos(Math.min(Math.min(nanos, timer), KernelWait.PARK_CAP_NANOS));
            return false;
        }
        sleeping = true;
        final boolean whole = barrier.getAsBoolean();
        try {
            if (stopped) {
                return false;
            }
            if (lastLook.getAsInt() > 0) {
                return true;
            }
            final long timer = nanosToNextTimer.applyAsLong(System.nanoTime());
            if (timer <= 0) {
                return false;   // due already: the next duty cycle fires it
            }
            // without a whole barrier a wake racing this sleep can go unseen: then it waits at most the park cap
            final long length = Math.min(Math.min(nanos, timer), whole ? Long.MAX_VALUE : KernelWait.PARK_CAP_NANOS);
            sleeps++;
            if (w.await(link.get(), length)) {
                earlyWakes++;
            }
            return false;
        } finally {
            sleeping = false;
        }
    }

    /** Whether the thread sleeps (or is about to): a waker reads it after publishing its work and its barrier. */
    public boolean asleep() {
        return sleeping;
    }

    /**
     * After this thread published work for the sleeper: a full fence (the waker's side of the handshake), then wakes it
     * if it sleeps. Any thread.
     */
    public void wake() {
        java.lang.invoke.VarHandle.fullFence();
        if (sleeping) {
            wakeNow();
        }
    }

    /** Ends the current or next sleep in the kernel. Any thread. */
    public void wakeNow() {
        final KernelWait w = kernelWait;
        if (w != null) {
            w.wake();
        }
    }

    /** The owner is closing: ends a sleep now, and the thread sleeps no more (its runner then stops it). */
    public void stop() {
        stopped = true;
        wake();
    }

    /** Closes the eventfd; on the sleeping thread as it stops. */
    public void close() {
        final KernelWait w = kernelWait;
        if (w != null) {
            w.close();
        }
    }

    /** How many times the thread slept in the kernel, and how many of those a datagram or a wake cut short. */
    public long[] counts() {
        return new long[] {sleeps, earlyWakes};
    }
}
