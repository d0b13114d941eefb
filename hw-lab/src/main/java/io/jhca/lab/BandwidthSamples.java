package io.jhca.lab;

/**
 * What one bandwidth run measured at one message size: the post time of every message and the times at which
 * completions covered the first k messages (perftest's tposted[] and tcompleted[]), or, without peak
 * measurement, only the first post and the last completion.
 */
final class BandwidthSamples {
    final int size;
    /** Messages measured (all QPs). */
    long iters;
    /** Post time of message i (peak measurement only). */
    final long[] tposted;
    /** Completion points: after completion j, {@code doneCount[j]} messages were complete at {@code doneTime[j]}. */
    final long[] doneCount;
    final long[] doneTime;
    int points;
    long firstPost;
    long lastCompletion;

    BandwidthSamples(int size, long iters, boolean peak, int maxPoints) {
        this.size = size;
        this.iters = iters;
        this.tposted = peak ? new long[(int) iters] : null;
        this.doneCount = peak ? new long[maxPoints] : null;
        this.doneTime = peak ? new long[maxPoints] : null;
    }

    boolean peak() {
        return tposted != null;
    }

    /** Completion points this can hold. */
    int maxPoints() {
        return doneCount == null ? 0 : doneCount.length;
    }

    void completed(long count, long now) {
        if (doneCount != null && points < doneCount.length) {
            doneCount[points] = count;
            doneTime[points] = now;
            points++;
        }
        lastCompletion = now;
    }
}
