package io.jhca.rxe;

import java.util.concurrent.locks.LockSupport;

import org.agrona.concurrent.IdleStrategy;

/**
 * The engine thread's default idle strategy: spin, then yield, then park, by time since the last work, and back
 * to spinning as soon as a duty cycle finds work.
 *
 * <ul>
 * <li>Spin ({@code PAUSE}) for {@link #spinNanos}, none by default: a spin holds a core that another thread may
 * need, and on a core nobody else needs a yield returns at once. With 20 us of spin, thread progress on two cores
 * (two devices in one process, each side's application polling: four busy threads) took 46-49 us per write-lat
 * half round trip, without it 15-26 us, as caller progress; bandwidth did not move beyond its noise.</li>
 * <li>Yield until {@link #yieldNanos}: on a machine with fewer cores than busy threads (an application polling
 * two in-process devices on two cores runs four), {@code sched_yield} hands the core to the thread that has work,
 * the application's or the peer engine's, instead of holding it for a whole time slice; on an idle core it
 * returns at once, so it costs no latency.</li>
 * <li>Park, doubling from {@link #minParkNanos} to {@link #maxParkNanos}: a quiet device takes no CPU. A park
 * lasts at least the thread's timer slack (50 us by default on Linux), so parking early is what made thread
 * progress slow: Agrona's BackoffIdleStrategy(100, 200, 1 us, 100 us), the previous default, parks after about a
 * hundred spins and two hundred yields, some tens of microseconds.</li>
 * </ul>
 * The park is the {@link Sleeper}'s: an rxe engine sleeps in the kernel on its sockets (a datagram or a post ends
 * the sleep at once, see {@code KernelWait}) and no longer than its next timer, so the park's time only bounds how
 * often a quiet device looks (rxe devices let it grow to 1 s).
 * One per engine thread; not thread-safe.
 */
public final class AdaptiveIdleStrategy implements IdleStrategy {

    /** Defaults: no spin, yield until 2 ms, then park (or sleep, see {@link Sleeper}) 50 us doubling to 1 ms. */
    public static final long DEFAULT_SPIN_NANOS = 0;
    public static final long DEFAULT_YIELD_NANOS = 2_000_000;
    public static final long DEFAULT_MIN_PARK_NANOS = 50_000;
    public static final long DEFAULT_MAX_PARK_NANOS = 1_000_000;

    private final long spinNanos;
    private final long yieldNanos;
    private final long minParkNanos;
    private final long maxParkNanos;
    private final Sleeper sleeper;
    /** When the current idle stretch began; 0 = not idle. */
    private long idleSince;
    private long now;
    private long parkNanos;

    /** What the park phase does with its time. */
    @FunctionalInterface
    public interface Sleeper {
        /** Sleeps up to {@code nanos}; true if it found work instead (the strategy goes back to spinning). */
        boolean sleep(long nanos);
    }

    /** The plain park: {@link LockSupport#parkNanos(long)} for the whole time. */
    public static final Sleeper PARK = nanos -> {
        LockSupport.parkNanos(nanos);
        return false;
    };

    public AdaptiveIdleStrategy() {
        this(PARK);
    }

    /** The default phases, parking with {@code sleeper}. */
    public AdaptiveIdleStrategy(final Sleeper sleeper) {
        this(DEFAULT_SPIN_NANOS, DEFAULT_YIELD_NANOS, DEFAULT_MIN_PARK_NANOS, DEFAULT_MAX_PARK_NANOS, sleeper);
    }

    public AdaptiveIdleStrategy(final long spinNanos, final long yieldNanos, final long minParkNanos,
            final long maxParkNanos) {
        this(spinNanos, yieldNanos, minParkNanos, maxParkNanos, PARK);
    }

    /**
     * @param spinNanos    spin this long after the last work
     * @param yieldNanos   then yield until this long after the last work (&gt;= spinNanos)
     * @param minParkNanos then park this long, doubling each time
     * @param maxParkNanos up to this (&gt;= minParkNanos)
     * @param sleeper      parks the thread for the park phase's time
     */
    public AdaptiveIdleStrategy(final long spinNanos, final long yieldNanos, final long minParkNanos,
            final long maxParkNanos, final Sleeper sleeper) {
        if (spinNanos < 0 || yieldNanos < spinNanos || minParkNanos <= 0 || maxParkNanos < minParkNanos) {
            throw new IllegalArgumentException("adaptive idle: need 0 <= spin (" + spinNanos + ") <= yield ("
                    + yieldNanos + ") and 0 < min park (" + minParkNanos + ") <= max park (" + maxParkNanos + ")");
        }
        this.spinNanos = spinNanos;
        this.yieldNanos = yieldNanos;
        this.minParkNanos = minParkNanos;
        this.maxParkNanos = maxParkNanos;
        this.sleeper = java.util.Objects.requireNonNull(sleeper, "sleeper");
    }

    @Override
    public void idle(final int workCount) {
        if (workCount > 0) {
            reset();
        } else {
            idle();
        }
    }

    @Override
    public void idle() {
        // every call: between two idle calls the engine ran a duty cycle, a receive system call, so the clock read
        // every sixteenth call (as it was) made a 2 us spin last some 16 duty cycles, 20-30 us
        now = System.nanoTime();
        if (idleSince == 0) {
            idleSince = now;
            parkNanos = minParkNanos;
        }
        final long idleFor = now - idleSince;
        if (idleFor < spinNanos) {
            Thread.onSpinWait();
        } else if (idleFor < yieldNanos) {
            Thread.yield();
        } else if (sleeper.sleep(parkNanos)) {
            reset();
        } else {
            parkNanos = Math.min(parkNanos << 1, maxParkNanos);
        }
    }

    @Override
    public void reset() {
        idleSince = 0;
    }

    /** The phase the next {@link #idle()} is in: "spin", "yield" or "park" (tests, diagnostics). */
    String phase() {
        if (idleSince == 0) {
            return "spin";
        }
        final long idleFor = now - idleSince;
        return idleFor < spinNanos ? "spin" : idleFor < yieldNanos ? "yield" : "park";
    }

    @Override
    public String alias() {
        return "adaptive";
    }

    @Override
    public String toString() {
        return "AdaptiveIdleStrategy{spin " + spinNanos + " ns, yield to " + yieldNanos + " ns, park " + minParkNanos
                + ".." + maxParkNanos + " ns}";
    }
}
