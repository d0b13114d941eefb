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
     * @param jvm    the JVM report's window, restarted at the first measured post (the warm-up's class loading and
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
            if (n >= warmup) {
                if (n == warmup && warmup > 0 && jvm != null) {
                    jvm.begin();
                    now = System.nanoTime();
                }
                out.tposted[(int) (n - warmup)] = now;
            }
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
