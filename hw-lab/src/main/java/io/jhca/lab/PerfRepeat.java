package io.jhca.lab;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The end of {@code --repeat N}: per size, jhca's ratio to the UDP floor measured in the same run, for every run, and
 * their median. One run on a machine shared with other work is one sample: the floor moves from run to run as much as
 * jhca does, so a ratio is judged by its median, with the spread beside it.
 */
final class PerfRepeat {
    private PerfRepeat() {
    }

    static void summary(List<PerfOutcome> runs, PrintWriter out) {
        out.println(PerfReport.LINE);
        out.printf(" %d runs: jhca / UDP floor of the same run, each run, then the median (lower ratio = faster jhca for"
                + " latency, higher = more bandwidth)%n", runs.size());
        PerfOutcome first = runs.get(0);
        for (int k = 0; k < first.bandwidth.size(); k++) {
            final int i = k;
            row(out, first.bandwidth.get(i).size(), "BW average / UDP stream floor", runs, o -> {
                UdpStream.Result u = PerfOutcome.at(o.udpStream, i);
                return u == null ? Double.NaN : PerfReport.ratio(o.bandwidth.get(i), u);
            });
            if (runs.stream().anyMatch(o -> PerfOutcome.at(o.udpStreamGso, i) != null)) {
                row(out, first.bandwidth.get(i).size(), "BW average / UDP stream floor by GSO", runs, o -> {
                    UdpStream.Result u = PerfOutcome.at(o.udpStreamGso, i);
                    return u == null ? Double.NaN : PerfReport.ratio(o.bandwidth.get(i), u);
                });
            }
        }
        for (int k = 0; k < first.latency.size(); k++) {
            final int i = k;
            long size = first.latency.get(i).size();
            boolean dur = first.latency.get(i).duration();
            String[] names = {"t_typical", "t_avg", "99%", "99.9%"};
            for (UdpFloor floor : UdpFloor.values()) {
                if (runs.stream().allMatch(o -> PerfOutcome.at(o.floor(floor), i) == null)) {
                    continue;
                }
                for (int f = 0; f < names.length; f++) {
                    if (dur && f != 1) {
                        continue; // -D has only t_avg
                    }
                    final int fig = f;
                    row(out, size, names[f] + " / UDP floor" + floor.suffix, runs, o -> {
                        LatencyStats u = PerfOutcome.at(o.floor(floor), i);
                        return u == null ? Double.NaN : PerfReport.latencyRatios(o.latency.get(i), u, o.params.latencyGap())[fig];
                    });
                }
            }
        }
        stalls(first, runs, out);
        out.println(PerfReport.LINE);
        out.flush();
    }

    /** Per size with a plain floor: every line's stalls per second ({@link Stalls}), each run, then the median. */
    private static void stalls(PerfOutcome first, List<PerfOutcome> runs, PrintWriter out) {
        boolean header = false;
        for (int k = 0; k < first.latency.size(); k++) {
            final int i = k;
            if (runs.stream().allMatch(o -> PerfOutcome.at(o.udp, i) == null)) {
                continue;
            }
            if (!header) {
                out.printf(" stalls per second measured (iterations over %d x the plain floor's t_typical of the same run),"
                        + " each run, then the median:%n", Stalls.FACTOR);
                header = true;
            }
            long size = first.latency.get(i).size();
            row(out, size, "jhca", runs, o -> rate(o, i, o.latency.get(i)));
            for (UdpFloor floor : UdpFloor.values()) {
                if (runs.stream().anyMatch(o -> PerfOutcome.at(o.floor(floor), i) != null)) {
                    row(out, size, "UDP floor" + floor.suffix, runs, o -> rate(o, i, PerfOutcome.at(o.floor(floor), i)));
                }
            }
        }
    }

    private static double rate(PerfOutcome o, int i, LatencyStats s) {
        LatencyStats plain = PerfOutcome.at(o.udp, i);
        return s == null || plain == null ? Double.NaN : Stalls.perSecond(s, Stalls.thresholdUsec(plain));
    }

    private static void row(PrintWriter out, long size, String what, List<PerfOutcome> runs,
                            Function<PerfOutcome, Double> ratio) {
        List<Double> measured = new ArrayList<>();
        StringBuilder each = new StringBuilder();
        for (PerfOutcome o : runs) {
            double r = ratio.apply(o);
            each.append(' ').append(Double.isNaN(r) ? "-" : String.format(Locale.ROOT, "%.2f", r));
            if (!Double.isNaN(r)) {
                measured.add(r);
            }
        }
        String median = measured.isEmpty() ? "not measured"
                : String.format(Locale.ROOT, "median %.2f", median(measured));
        out.printf(Locale.ROOT, " %-7d %s:%s  %s%n", size, what, each, median);
    }

    /** The middle value, or the mean of the two middle ones. */
    static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).toArray();
        Arrays.sort(v);
        int n = v.length;
        return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    }
}
