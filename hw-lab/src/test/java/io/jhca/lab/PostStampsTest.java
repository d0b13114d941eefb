package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * The post times of a latency loop with a warm-up: only the measured posts are kept, in order, the first of them in
 * slot 0 (the warm-up posts write there too, without a branch on the phase, and the first measured post overwrites
 * it), with and without a warm-up.
 */
class PostStampsTest {

    @Test
    void keepsExactlyTheMeasuredPostsInOrder() {
        for (int warmup : new int[] {0, 1, 2, 7, 20000}) {
            int iters = 5;
            LatencySamples out = LatencySamples.iterations(2, iters);
            JvmReport jvm = JvmReport.start(null);
            PostStamps stamps = new PostStamps(out, null, warmup, jvm);
            assertEquals(warmup + iters, stamps.total());
            long[] before = new long[iters];
            for (long n = 0; n < stamps.total(); n++) {
                if (n >= warmup) {
                    before[(int) (n - warmup)] = System.nanoTime();
                }
                assertTrue(stamps.stamp(n));
                assertEquals(out.tposted[(int) Math.max(0, n - warmup)], stamps.now(), "post " + n);
            }
            for (int i = 0; i < iters; i++) {
                assertTrue(out.tposted[i] >= before[i], "warm-up " + warmup + ": slot " + i + " is measured post " + i);
                assertTrue(i == 0 || out.tposted[i] >= out.tposted[i - 1], "in order");
            }
        }
    }

    @Test
    void thePhaseMaskAndTheSlotTurnAtTheFirstMeasuredPost() {
        long w = 20000;
        assertEquals(0, PostStamps.measured(0, w));
        assertEquals(0, PostStamps.measured(w - 1, w), "the last warm-up post");
        assertEquals(-1, PostStamps.measured(w, w), "the first measured post: all ones");
        assertEquals(-1, PostStamps.measured(w + 999, w));
        assertEquals(-1, PostStamps.measured(0, 0), "no warm-up: every post is measured");
        assertEquals(0, PostStamps.slot(0, w));
        assertEquals(0, PostStamps.slot(w - 1, w));
        assertEquals(0, PostStamps.slot(w, w));
        assertEquals(1, PostStamps.slot(w + 1, w));
        assertEquals(999, PostStamps.slot(w + 999, w));
    }

    @Test
    void theLatencyGapIsWaitedFromTheMiddleOfTheWarmUp() {
        long w = 20000;
        long gap = 5000;
        assertEquals(0, LatencyLoops.gapBefore(0, w, gap));
        assertEquals(0, LatencyLoops.gapBefore(9999, w, gap), "the warm-up's first half waits no gap");
        assertEquals(gap, LatencyLoops.gapBefore(10000, w, gap), "its second half does: the wait loop is compiled");
        assertEquals(gap, LatencyLoops.gapBefore(w - 1, w, gap));
        assertEquals(gap, LatencyLoops.gapBefore(w, w, gap), "every measured post waits it");
        assertEquals(gap, LatencyLoops.gapBefore(w + 999, w, gap));
        assertEquals(0, LatencyLoops.gapBefore(w, w, 0), "no gap asked: none waited");
        assertEquals(gap, LatencyLoops.gapBefore(0, 0, gap), "no warm-up: from the first post");
        assertEquals(gap, LatencyLoops.gapBefore(0, 1, gap), "one warm-up post: it waits too");
    }
}
