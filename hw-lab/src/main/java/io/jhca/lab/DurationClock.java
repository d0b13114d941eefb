package io.jhca.lab;

/**
 * perftest's -D (duration) state machine without signals (perftest_resources.c catch_alarm): warm up for
 * {@code margin} seconds, sample for {@code duration - 2 x margin}, cool down for {@code margin}, stop.
 * Only operations completed inside the sample window are counted.
 */
final class DurationClock {
    private final long start;
    private final long sampleStart;
    private final long sampleEnd;
    private final long end;

    DurationClock(int durationSeconds, int marginSeconds) {
        start = System.nanoTime();
        sampleStart = start + marginSeconds * 1_000_000_000L;
        end = start + durationSeconds * 1_000_000_000L;
        sampleEnd = end - marginSeconds * 1_000_000_000L;
    }

    boolean sampling(long now) {
        return now - sampleStart >= 0 && now - sampleEnd < 0;
    }

    boolean over(long now) {
        return now - end >= 0;
    }

    long end() {
        return end;
    }

    /** Nanoseconds of the sample window of a {@code durationSeconds} run with {@code marginSeconds} at each end. */
    static long sampleNanos(int durationSeconds, int marginSeconds) {
        return (durationSeconds - 2L * marginSeconds) * 1_000_000_000L;
    }

    /** Nanoseconds of the sample window. */
    long sampleNanos() {
        return sampleEnd - sampleStart;
    }
}
