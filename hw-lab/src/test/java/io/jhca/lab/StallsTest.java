package io.jhca.lab;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Stalls per second: the threshold from the plain floor, the count at its edge, the time it is divided by. */
class StallsTest {

    /** {@code n} round trips of {@code rttNs}, write-lat style (rtt factor 2: the report's unit is half of it). */
    private static long[] flat(int n, long rttNs) {
        long[] d = new long[n];
        Arrays.fill(d, rttNs);
        return d;
    }

    @Test
    void thresholdIsTwentyTimesThePlainFloorsTypical() {
        LatencyStats floor = LatencyStats.of(2, flat(999, 4_000), 2);   // t_typical 2 usec one way
        assertEquals(2.0, floor.tTypical(), 1e-9);
        assertEquals(40.0, Stalls.thresholdUsec(floor), 1e-9);
    }

    @Test
    void countsIterationsOverTheThresholdPerSecondOfTheirSum() {
        long[] d = flat(999, 4_000);
        d[10] = 500_000;    // three stalls of half a millisecond round trip
        d[500] = 500_000;
        d[998] = 500_000;
        LatencyStats s = LatencyStats.of(2, d, 2);
        double seconds = (996 * 4_000 + 3 * 500_000) / 1e9;
        // 40 usec one way is an 80 usec round trip: the three are over it, the rest far under
        assertEquals(3 / seconds, Stalls.perSecond(s, 40.0), 3 / seconds * 2e-3, "within the histogram's 3 digits");
        assertEquals(0.0, Stalls.perSecond(s, 300.0), 0.0, "a 600 usec round trip is over none of them");
    }

    @Test
    void anIterationAtTheThresholdIsNotAStallAndTheNextDistinctValueIs() {
        long thresholdRttNs = 80_000;   // 40 usec one way
        long[] at = flat(99, 4_000);
        at[50] = thresholdRttNs;
        assertEquals(0.0, Stalls.perSecond(LatencyStats.of(2, at, 2), 40.0), 0.0);
        LatencyStats probe = LatencyStats.of(2, at, 2);
        long next = probe.histogramNs().nextNonEquivalentValue(thresholdRttNs);
        long[] over = flat(99, 4_000);
        over[50] = next;
        assertTrue(Stalls.perSecond(LatencyStats.of(2, over, 2), 40.0) > 0, "one past the threshold's bucket: " + next);
    }

    @Test
    void readTestsCountWholeRoundTrips() {
        long[] d = flat(99, 10_000);   // rtt factor 1: the unit is the round trip itself
        d[3] = 250_000;
        LatencyStats s = LatencyStats.of(8, d, 1);
        double seconds = (98 * 10_000 + 250_000) / 1e9;
        assertEquals(1 / seconds, Stalls.perSecond(s, 200.0), 1 / seconds * 2e-3);
        assertEquals(0.0, Stalls.perSecond(s, 250.0), 0.0);
    }

    @Test
    void rowNamesEveryMeasuredFloorWithItsRate() {
        long[] d = flat(999, 4_000);
        d[7] = 500_000;
        LatencyStats rdma = LatencyStats.of(2, d, 2);
        LatencyStats plain = LatencyStats.of(2, flat(999, 4_000), 2);
        LatencyStats batched = LatencyStats.of(2, flat(999, 5_000), 2);
        String row = Stalls.row(rdma, plain, null, batched);
        Matcher m = Pattern.compile("^ 2 +stalls \\(iterations over 20 x the plain floor's t_typical, 40\\.00 usec\\) per second"
                + " measured: jhca ([0-9.]+), UDP floor 0\\.0, UDP floor with batched ACKs 0\\.0$").matcher(row);
        assertTrue(m.matches(), row);
        double seconds = (998 * 4_000 + 500_000) / 1e9;
        assertEquals(1 / seconds, Double.parseDouble(m.group(1)), 0.1, row);
    }
}
