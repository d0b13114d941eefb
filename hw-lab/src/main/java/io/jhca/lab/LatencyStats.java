package io.jhca.lab;

import org.HdrHistogram.Histogram;

import java.util.Arrays;

/**
 * The latency figures perftest prints (perftest_parameters.c print_report_lat), in microseconds of one-way
 * (RTT/2 for send and write) or round-trip (read, atomic) time: the iteration deltas are sorted, the two largest
 * dropped (LAT_MEASURE_TAIL), and t_min, t_max, t_typical (median), t_avg, t_stdev and the 99% and 99.9%
 * percentiles taken from what is left, at perftest's indices.
 *
 * <p>One deliberate difference: perftest accumulates the variance through int temporaries, truncating every
 * term to whole microseconds; the standard deviation here is computed in doubles.
 */
public record LatencyStats(int size, long iters, double tMin, double tMax, double tTypical, double tAvg, double tStdev,
                           double p99, double p999, Histogram histogramNs, int rttFactor, boolean duration,
                           double tps) {

    /** perftest_parameters.c LAT_MEASURE_TAIL: the largest deltas left out (warm-up outliers). */
    static final int TAIL = 2;

    /** From an iteration-mode run (perftest needs at least MIN_ITER = 5 iterations). */
    public static LatencyStats of(int size, long[] deltasNs, int rttFactor) {
        long[] d = deltasNs.clone();
        Histogram h = new Histogram(LatencySamples.MAX_NS, 3);
        for (long v : d) {
            h.recordValue(Math.max(0, Math.min(v, LatencySamples.MAX_NS)));
        }
        Arrays.sort(d);
        int m = d.length - TAIL;
        if (m < 1) {
            throw new IllegalArgumentException("too few iterations for latency statistics: " + (d.length + 1));
        }
        double q = 1000.0 * rttFactor; // ns -> usec, and per direction
        double sum = 0;
        for (int i = 0; i < m; i++) {
            sum += d[i] / q;
        }
        double avg = sum / m;
        double var = 0;
        for (int i = 0; i < m; i++) {
            double x = avg - d[i] / q;
            var += x * x;
        }
        double median = ((m - 1) % 2 != 0) ? (d[m / 2] + d[m / 2 - 1]) / 2.0 : d[m / 2]; // get_median
        int i99 = (int) Math.ceil(m * 0.99);
        int i999 = (int) Math.ceil(m * 0.999);
        return new LatencyStats(size, deltasNs.length + 1, d[0] / q, d[m] / q, median / q, avg, Math.sqrt(var / m),
                d[Math.min(i99, d.length - 1)] / q, d[Math.min(i999, d.length - 1)] / q, h, rttFactor, false, 0);
    }

    /** From a duration-mode run (print_report_lat_duration): t_avg = window / iterations / rtt factor, and tps. */
    public static LatencyStats ofDuration(LatencySamples s, int rttFactor) {
        Histogram h = s.histogram;
        double avg = s.iters == 0 ? 0 : s.sampleNanos / 1000.0 / rttFactor / s.iters;
        double tps = s.sampleNanos == 0 ? 0 : s.iters / (s.sampleNanos / 1e9);
        double q = 1000.0 * rttFactor;
        boolean any = h.getTotalCount() > 0;
        return new LatencyStats(s.size, s.iters, any ? h.getMinValue() / q : 0, any ? h.getMaxValue() / q : 0,
                any ? h.getValueAtPercentile(50) / q : 0, avg, any ? h.getStdDeviation() / q : 0,
                any ? h.getValueAtPercentile(99) / q : 0, any ? h.getValueAtPercentile(99.9) / q : 0, h, rttFactor, true, tps);
    }

    private static String c2(double v) {
        return CFormat.fixed(v, 2);
    }

    /**
     * The table row, REPORT_FMT_LAT (" %-7lu %" PRIu64 "          %-7.2f ...") or, for -D, REPORT_FMT_LAT_DUR.
     */
    public String row() {
        if (duration) {
            return CFormat.f(" %-7d       %d            %-7s        %-7s", size, iters, c2(tAvg), c2(tps));
        }
        return CFormat.f(" %-7d %d          %-7s        %-7s      %-7s  \t       %-7s     \t%-7s\t\t%-7s \t\t%-7s",
                size, iters, c2(tMin), c2(tMax), c2(tTypical), c2(tAvg), c2(tStdev), c2(p99), c2(p999));
    }
}
