package io.jhca.lab;

/**
 * When each post of a latency loop went out. With {@code -n}, every measured post's time is kept (perftest's
 * {@code tposted}); the warm-up posts before them are not; with {@code -D}, the gap between consecutive posts inside the sampling window is recorded
 * and counted, and the run ends when the clock says so. One per run, made before the measured loop.
 */
final class PostStamps {
    private final LatencySamples out;
    private final DurationClock clock;
    private long now;
    private long last;
    private long counted;
    private final long warmup;
    private final JvmReport jvm;

    /**
     * @param warmup posts that run before the measured ones (-n mode only), not stamped
     * @param jvm    the JVM report's window, restarted at the last warm-up post (the warm-up's class loading and
     *               interpreted code are not the measurement's), or null
     */
    PostStamps(LatencySamples out, DurationClock clock, long warmup, JvmReport jvm) {
        this.out = out;
        this.clock = clock;
        this.warmup = clock == null ? warmup : 0;
        this.jvm = jvm;
    }

    /** All posts of the loop: the warm-up and the measured ones. */
    long total() {
        return clock == null ? warmup + out.iters : Long.MAX_VALUE;
    }

    /** Stamps post number {@code n}; false when a duration run is over and nothing more may be posted. */
    boolean stamp(long n) {
        now = System.nanoTime();
        if (clock == null) {
            // No branch the warm-up never takes: the JIT compiles such a branch as a trap, and the first measured post
            // took it, deoptimizing the loop on both sides (about 1 ms, the run's maximum, then again as the loop was
            // compiled anew). So the window restarts halfway through the warm-up as well as at its end, by one branch
            // for both (a trap taken there makes the JIT keep the branch), and warm-up posts store their time into
            // slot 0, which the first measured one overwrites. The window starts at the last warm-up post, not the
            // first measured one: reading the device's counters takes about 0.1 ms, which at the first measured post
            // lands in the peer's first measured round trip.
            if ((n - (warmup - 1)) * (n - (warmup >> 1)) == 0 && warmup > 0 && jvm != null) {
                jvm.begin();
            }
            out.tposted[slot(n, warmup)] = now;
            return true;
        }
        if (clock.over(now)) {
            return false;
        }
        if (clock.sampling(now) && last != 0) {
            out.record(now - last);
            counted++;
        }
        last = now;
        return true;
    }

    /**
     * All ones from post {@code warmup} on (the first measured one), 0 before: for masking a measured-only value in
     * without a branch on the phase (a branch the warm-up never takes is compiled as a trap; see {@link #stamp}).
     */
    static long measured(long n, long warmup) {
        return (warmup - 1 - n) >> 63;
    }

    /** Where post {@code n}'s time goes: its index among the measured posts, 0 for every warm-up post. */
    static int slot(long n, long warmup) {
        long i = n - warmup;
        return (int) (i & ~(i >> 63));   // max(0, i) without a branch
    }

    /** The time of the last {@link #stamp}. */
    long now() {
        return now;
    }

    /** After the loop: a duration run reports the iterations it sampled and how long it sampled. */
    void finish() {
        if (clock != null) {
            out.iters = counted;
            out.sampleNanos = clock.sampleNanos();
        }
    }
}
