package io.jhca.lab;

import org.HdrHistogram.Histogram;

/**
 * How often the iterations of a latency run stalled: those longer than {@value #FACTOR} times the plain UDP floor's
 * t_typical, per second of measurement. A machine stalls a thread at a rate per second (interrupts, the kernel's
 * own work, a hypervisor), not per iteration, so a slower stack, whose 1000 iterations last longer, meets more of
 * the same stalls; at the default 1000 iterations its 99.9% (the second largest of its 999 round trips, as perftest
 * takes it) is then a stall where the floor's is not. The same rate for jhca and the floors says the tail is the
 * machine's; a higher one for jhca says it is jhca's.
 */
final class Stalls {

    /** An iteration counts as a stall when it takes this many times the plain floor's t_typical. */
    static final int FACTOR = 20;

    private Stalls() {
    }

    /** The threshold in the report's unit (µs per direction, as the table): {@value #FACTOR} x the floor's t_typical. */
    static double thresholdUsec(LatencyStats plainFloor) {
        return FACTOR * plainFloor.tTypical();
    }

    /**
     * Iterations of {@code s} longer than {@code thresholdUsec} (in the report's unit), per second of its measurement
     * (the sum of its iterations). Counted in its histogram: an iteration in the same bucket as the threshold (three
     * significant digits) is not over it. NaN for a run with nothing recorded.
     */
    static double perSecond(LatencyStats s, double thresholdUsec) {
        Histogram h = s.histogramNs();
        long n = h.getTotalCount();
        if (n == 0) {
            return Double.NaN;
        }
        long thresholdNs = Math.round(thresholdUsec * 1000.0 * s.rttFactor());
        long over = n - h.getCountBetweenValues(0, Math.min(thresholdNs, h.getHighestTrackableValue()));
        double seconds = h.getMean() * n / 1e9;
        return seconds > 0 ? over / seconds : Double.NaN;
    }

    /**
     * The line after the floors, as " 2       stalls (iterations over 20 x the plain floor's t_typical, 34.40 usec)
     * per second measured: jhca 240.1, UDP floor 264.0, UDP floor with RoCE's ACKs 196.3, UDP floor with batched ACKs
     * 180.2". {@code floors} are the floors of this size in {@link UdpFloor} order, null where one was not measured;
     * the first is the plain one.
     */
    static String row(LatencyStats rdma, LatencyStats... floors) {
        double t = thresholdUsec(floors[0]);
        StringBuilder b = new StringBuilder(CFormat.f(" %-7d stalls (iterations over %d x the plain floor's t_typical, %s"
                + " usec) per second measured: jhca %s", rdma.size(), FACTOR, CFormat.fixed(t, 2),
                CFormat.fixed(perSecond(rdma, t), 1)));
        for (int i = 0; i < floors.length && i < UdpFloor.values().length; i++) {
            if (floors[i] != null) {
                b.append(", UDP floor").append(UdpFloor.values()[i].suffix).append(' ')
                        .append(CFormat.fixed(perSecond(floors[i], t), 1));
            }
        }
        return b.toString();
    }
}
