package io.jhca.lab;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * {@code --plot FILE.png|FILE.svg}: for latency tests the latency CDF of every message size (and of the UDP
 * floor, dashed), for bandwidth tests BW average and peak against message size.
 */
public final class PerfPlot {
    private PerfPlot() {
    }

    public static Chart chart(PerfOutcome o) {
        PerfTest t = o.params.test();
        String where = o.device + (o.peerDevice != null ? " <-> " + o.peerDevice : "");
        Chart c;
        if (t.latency()) {
            boolean log = false;
            double lo = Double.MAX_VALUE;
            double hi = 0;
            for (LatencyStats s : o.latency) {
                lo = Math.min(lo, s.tMin());
                hi = Math.max(hi, s.histogramNs().getMaxValue() / (1000.0 * s.rttFactor()));
            }
            for (LatencyStats s : o.udp) {
                if (s != null) {
                    lo = Math.min(lo, s.tMin());
                }
            }
            log = lo > 0 && hi / lo > 20;
            String unit = t.rttFactor() == 2 ? "latency [usec], RTT/2" : "latency [usec], round trip";
            c = new Chart("hwlab perf " + t.command() + " latency CDF (" + where + ")", unit, "percentile [%]", log)
                    .yRange(0, 100);
            for (int i : pick(o.latency.size(), 8)) {
                LatencyStats s = o.latency.get(i);
                c.add(cdf("jhca " + bytes(s.size()), s.histogramNs(), 1000.0 * s.rttFactor(), false));
                LatencyStats u = i < o.udp.size() ? o.udp.get(i) : null;
                if (u != null) {
                    c.add(cdf("UDP floor " + bytes(u.size()), u.histogramNs(), 1000.0 * u.rttFactor(), true));
                }
            }
        } else {
            String unit = o.params.reportGbits() ? "Gb/sec" : "MiB/sec";
            c = new Chart("hwlab perf " + t.command() + " bandwidth (" + where + ")", "message size [bytes]",
                    "bandwidth [" + unit + "]", true).binaryX();
            int n = o.bandwidth.size();
            double[] x = new double[n];
            double[] avg = new double[n];
            double[] peak = new double[n];
            boolean anyPeak = false;
            for (int i = 0; i < n; i++) {
                BandwidthStats b = o.bandwidth.get(i);
                x[i] = b.size();
                avg[i] = b.bwAvg();
                peak[i] = b.bwPeak();
                anyPeak |= b.bwPeak() > 0;
            }
            c.add(new Chart.Series("BW average", x, avg, false, true));
            if (anyPeak) {
                c.add(new Chart.Series("BW peak", x, peak, true, true));
            }
        }
        c.note("JVM: " + JvmReport.jvm());
        if (o.jvm != null) {
            c.note("GC: " + JvmReport.gc() + ", cycles during measurement: " + o.jvm.gcCycles());
        }
        return c;
    }

    public static void write(PerfOutcome o, Path file) throws IOException {
        Chart c = chart(o);
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        String name = file.getFileName().toString().toLowerCase(Locale.ROOT);
        if (name.endsWith(".svg")) {
            SvgCanvas svg = new SvgCanvas(Chart.WIDTH, Chart.HEIGHT);
            c.draw(svg);
            Files.writeString(file, svg.finish(), StandardCharsets.UTF_8);
        } else if (name.endsWith(".png")) {
            PngCanvas png = new PngCanvas(Chart.WIDTH, Chart.HEIGHT);
            c.draw(png);
            png.save(file);
        } else {
            throw new IOException("--plot file must end in .png or .svg: " + file);
        }
    }

    /** Up to {@code max} indices of {@code n}, evenly spread, first and last included (keeps the legend readable). */
    static int[] pick(int n, int max) {
        if (n <= max) {
            int[] all = new int[n];
            for (int i = 0; i < n; i++) {
                all[i] = i;
            }
            return all;
        }
        int[] r = new int[max];
        for (int i = 0; i < max; i++) {
            r[i] = (int) Math.round(i * (n - 1) / (double) (max - 1));
        }
        return r;
    }

    static Chart.Series cdf(String name, Histogram h, double divisor, boolean dashed) {
        List<double[]> pts = new ArrayList<>();
        if (h.getTotalCount() > 0) {
            for (HistogramIterationValue v : h.percentiles(5)) {
                pts.add(new double[] {v.getValueIteratedTo() / divisor, v.getPercentileLevelIteratedTo()});
                if (v.getPercentileLevelIteratedTo() >= 100.0) {
                    break;
                }
            }
        }
        double[] x = new double[pts.size()];
        double[] y = new double[pts.size()];
        for (int i = 0; i < x.length; i++) {
            x[i] = pts.get(i)[0];
            y[i] = pts.get(i)[1];
        }
        return new Chart.Series(name, x, y, dashed, false);
    }

    static String bytes(long n) {
        if (n >= 1 << 20 && n % (1 << 20) == 0) {
            return (n >> 20) + " MiB";
        }
        if (n >= 1024 && n % 1024 == 0) {
            return (n >> 10) + " KiB";
        }
        return n + " B";
    }
}
