package io.jhca.lab;

import org.HdrHistogram.Histogram;

/**
 * What one latency run measured at one message size. In iteration mode, the post time of every iteration
 * (perftest's tposted[]), from which the per-iteration deltas follow; in duration mode the count of iterations
 * and the sample window, plus every delta recorded in a histogram as it happened.
 */
public final class LatencySamples {
    /** Highest recordable delta: one minute in nanoseconds; slower iterations are clamped to it. */
    static final long MAX_NS = 60_000_000_000L;

    final int size;
    final long[] tposted;
    long iters;
    long sampleNanos;
    final Histogram histogram;

    private LatencySamples(int size, long[] tposted) {
        this.size = size;
        this.tposted = tposted;
        this.histogram = new Histogram(MAX_NS, 3);
    }

    static LatencySamples iterations(int size, int iters) {
        LatencySamples s = new LatencySamples(size, new long[iters]);
        s.iters = iters;
        return s;
    }

    static LatencySamples duration(int size) {
        return new LatencySamples(size, null);
    }

    boolean durationMode() {
        return tposted == null;
    }

    /** Duration mode: one delta (nanoseconds of a full iteration), recorded without allocating. */
    void record(long deltaNs) {
        histogram.recordValue(Math.max(0, Math.min(deltaNs, MAX_NS)));
    }

    /** Iteration mode: the deltas between successive posts, perftest's delta[i] = tposted[i+1] - tposted[i]. */
    long[] deltas() {
        long[] d = new long[tposted.length - 1];
        for (int i = 0; i < d.length; i++) {
            d[i] = tposted[i + 1] - tposted[i];
        }
        return d;
    }
}
