package io.jhca.lab;

/**
 * The bandwidth figures perftest prints (perftest_parameters.c print_report_bw): average BW and message rate
 * over first post to last completion, and peak BW from the fastest per-message time over any stretch from a
 * post to a later completion point; MiB/sec (0x100000 bytes) or, with --report_gbits, Gb/sec (125000000 bytes).
 *
 * @param size    message size
 * @param iters   messages measured
 * @param bwPeak  peak BW (0 when not measured, as perftest prints it with -N or more than 20000 iterations)
 * @param bwAvg   average BW
 * @param msgRate million messages per second
 * @param gbits   the unit: Gb/sec rather than MiB/sec
 */
public record BandwidthStats(long size, long iters, double bwPeak, double bwAvg, double msgRate, boolean gbits) {

    static double formatFactor(boolean gbits) {
        return gbits ? 125_000_000.0 : 0x100000;
    }

    static BandwidthStats of(BandwidthSamples s, boolean gbits) {
        double ff = formatFactor(gbits);
        long elapsed = s.lastCompletion - s.firstPost;
        if (s.iters == 0 || elapsed <= 0) {
            return new BandwidthStats(s.size, s.iters, 0, 0, 0, gbits);
        }
        double seconds = elapsed / 1e9;
        double avg = (double) s.size * s.iters / seconds / ff;
        double rate = s.iters / seconds / 1e6;
        double peak = 0;
        if (s.peak() && s.points > 0) {
            // the smallest time per message over a stretch from post i to a completion point that covers it
            double best = Double.MAX_VALUE;
            for (int i = 0; i < s.tposted.length; i++) {
                for (int j = 0; j < s.points; j++) {
                    long covered = s.doneCount[j];
                    if (covered - 1 < i) {
                        continue;
                    }
                    double t = (double) (s.doneTime[j] - s.tposted[i]) / (covered - i);
                    if (t > 0 && t < best) {
                        best = t;
                    }
                }
            }
            if (best < Double.MAX_VALUE) {
                peak = s.size / (best / 1e9) / ff;
            }
        }
        return new BandwidthStats(s.size, s.iters, peak, avg, rate, gbits);
    }

    static BandwidthStats of(PerftestComm.BwReport r, boolean gbits) {
        return new BandwidthStats(r.size(), r.iters(), r.bwPeak(), r.bwAvg(), r.msgRate(), gbits);
    }

    PerftestComm.BwReport report() {
        return new PerftestComm.BwReport(size, iters, bwPeak, bwAvg, msgRate);
    }

    /**
     * The table row, REPORT_FMT (" %-7lu    %-10" PRIu64 "       %-7.2lf ..."), or REPORT_FMT_EXT with six
     * decimals when the Gb/sec average is below 0.1 (print_full_bw_report inc_accuracy).
     */
    public String row() {
        if (gbits && bwAvg < 0.1) {
            return CFormat.f(" %-7d    %d           %-7s            %-7s            %-7s", size, iters,
                    CFormat.fixed(bwPeak, 6), CFormat.fixed(bwAvg, 6), CFormat.fixed(msgRate, 6));
        }
        return CFormat.f(" %-7d    %-10d       %-7s            %-7s\t\t   %-7s", size, iters,
                CFormat.fixed(bwPeak, 2), CFormat.fixed(bwAvg, 2), CFormat.fixed(msgRate, 6));
    }
}
