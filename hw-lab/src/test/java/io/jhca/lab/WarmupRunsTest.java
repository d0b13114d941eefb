package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import org.junit.jupiter.api.Test;

/** The bandwidth warm-up's runs: as even as they go, every message in one, none empty. */
class WarmupRunsTest {
    @Test
    void cutsTheWarmupIntoEvenRuns() {
        assertArrayEquals(new long[] {5000, 5000, 5000, 5000}, BandwidthLoops.warmupRuns(20000));
        assertArrayEquals(new long[] {3, 2, 2, 2}, BandwidthLoops.warmupRuns(9));
        assertArrayEquals(new long[] {1, 1}, BandwidthLoops.warmupRuns(2));
        assertArrayEquals(new long[] {}, BandwidthLoops.warmupRuns(0));
    }
}
