package io.jhca.lab;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * {@code --json}: the run as JSON, with perftest's key names where perftest has them (--out_json:
 * write_test_info_to_file and REPORT_FMT_LAT_JSON / REPORT_FMT_JSON: test, Device, Mtu, MsgSize, n_iterations,
 * t_min ... percentile_99.9, BW_peak, BW_average, MsgRate), plus what perftest does not write: one "results"
 * entry per message size, the full latency histogram (every recorded HdrHistogram bucket, in the reported
 * unit), the UDP floor and the JVM/GC figures.
 */
public final class PerfJson {
    private PerfJson() {
    }

    public static void write(PerfOutcome o, Path file) throws IOException {
        Path parent = file.toAbsolutePath().getParent();
        if (parent != null) {
            Files.createDirectories(parent);
        }
        Files.writeString(file, render(o), StandardCharsets.UTF_8);
    }

    public static String render(PerfOutcome o) {
        PerfParams p = o.params;
        PerfTest t = p.test();
        JsonOut j = new JsonOut().beginObject();
        j.key("test_info").beginObject()
                // write_test_info_to_file: "Multicast_" before "Test", then "MultiCast_runs": "on_UD"
                .field("test", p.mcg() ? t.jsonName().replaceFirst("Test$", "Multicast_Test") : t.jsonName());
        if (p.mcg()) {
            j.field("MultiCast_runs", "on_UD");
        }
        j.field("Dual_port", "OFF")
                .field("Device", o.device)
                .field("Number_of_qps", p.numQps())
                .field("Transport_type", o.transport)
                .field("Connection_type", p.mcg() ? "UD" : "RC")
                .field("Using_SRQ", p.useSrq() ? "ON" : "OFF")
                .field("PCIe_relax_order", "Unsupported")
                .field("ibv_wr_API", "ON")
                .field("TX_depth", o.txDepth);
        if (t.verb() == PerfTest.Verb.SEND) {
            j.field("RX_depth", o.rxDepth);
        }
        if (!t.latency()) {
            j.field("CQ_Moderation", o.cqMod);
        }
        j.field("Mtu", o.mtu).field("Link_type", o.linkLayer).field("GID_index", o.gidIndex);
        if (t.verb() == PerfTest.Verb.READ || t.verb() == PerfTest.Verb.ATOMIC) {
            j.field("Outstand_reads", o.outReads);
        } else {
            j.field("Max_inline_data", o.inlineSize);
        }
        // as the banner says them (perftest's write_test_info_to_file prints the same two settings)
        j.field("rdma_cm_QPs", p.rdmaCm() ? "ON" : "OFF").field("Data_ex_method", p.rdmaCm() ? "rdma_cm" : "Ethernet");
        if (p.durationMode()) {
            j.field("Duration", p.duration());
        }
        j.endObject();

        j.key("results").beginArray();
        if (t.latency()) {
            for (int i = 0; i < o.latency.size(); i++) {
                LatencyStats s = o.latency.get(i);
                j.beginObject();
                latency(j, s);
                for (UdpFloor f : UdpFloor.values()) {
                    floor(j, f.json, s, PerfOutcome.at(o.floor(f), i), p.latencyGap());
                }
                stalls(j, s, o.floorsAt(i));
                j.endObject();
            }
        } else {
            for (int i = 0; i < o.bandwidth.size(); i++) {
                BandwidthStats s = o.bandwidth.get(i);
                j.beginObject().field("MsgSize", s.size()).field("n_iterations", s.iters()).field("BW_peak", s.bwPeak())
                        .field("BW_average", s.bwAvg()).field("MsgRate", s.msgRate())
                        .field("BW_unit", s.gbits() ? "Gb/sec" : "MiB/sec");
                stream(j, "udp_stream_floor", s, PerfOutcome.at(o.udpStream, i));
                stream(j, "udp_stream_floor_gso", s, PerfOutcome.at(o.udpStreamGso, i));
                j.endObject();
            }
        }
        j.endArray();
        if (o.udpSkipped != null) {
            j.field("udp_baseline_skipped", o.udpSkipped);
        }
        if (o.floorsAtServer) {
            j.field("udp_baseline_other_end", "server process");
        }
        if (o.floorWarmupIters >= 0) {
            j.field("udp_baseline_warmup_iterations", o.floorWarmupIters);
        }

        j.key("hwlab").beginObject().field("role", o.role).field("device", o.device);
        if (o.peerDevice != null) {
            j.field("peer_device", o.peerDevice);
        }
        j.field("peer_perftest_version", o.remoteVersion).field("warmup_iterations", o.warmupIters)
                .field("private_warmup_iterations", o.privateWarmupIters)
                .field("latency_gap_usec", p.latencyGap()).endObject();
        j.key("jvm").beginObject().field("name", JvmReport.jvm()).field("gc", JvmReport.gc());
        if (o.jvm != null) {
            j.field("gc_cycles", o.jvm.gcCycles()).field("gc_time_ms", o.jvm.gcMillis())
                    .field("allocated_bytes_measuring_thread", o.jvm.allocatedBytes())
                    .field("jit_compile_ms", o.jvm.jitMillis()).field("jit_idle_wait_ms", o.jvm.jitWaitMillis());
        }
        j.endObject();
        MachineReport.Machine m = MachineReport.get();
        j.key("machine").beginObject().field("cpus", m.cpus()).field("cpu", m.cpu()).field("hypervisor", m.hypervisor())
                .field("kernel", m.kernel()).field("null_syscall_ns", m.syscallNanos()).endObject();
        if (o.jvm != null && o.jvm.losses() != null && !o.jvm.losses().moved().isEmpty()) {
            j.key("device_counters_during_measurement").beginObject();
            for (java.util.Map.Entry<String, Long> e : o.jvm.losses().moved().entrySet()) {
                j.field(e.getKey(), e.getValue());
            }
            j.endObject();
        }
        return j.endObject().toString();
    }

    /** A UDP floor of one size, with jhca's figures as multiples of its own ({@code jhca_ratio}); nothing if not measured. */
    private static void floor(JsonOut j, String key, LatencyStats rdma, LatencyStats u, int gapUsec) {
        if (u == null) {
            return;
        }
        j.key(key).beginObject();
        latency(j, u);
        double[] r = PerfReport.latencyRatios(rdma, u, gapUsec);
        j.key("jhca_ratio").beginObject().field("t_typical", r[0]).field("t_avg", r[1]).field("percentile_99", r[2])
                .field("percentile_99.9", r[3]).endObject();
        j.endObject();
    }

    /** {@link Stalls}: the threshold and every line's stalls per second; nothing without the plain floor. */
    private static void stalls(JsonOut j, LatencyStats rdma, LatencyStats[] floors) {
        if (floors[0] == null) {
            return;
        }
        double t = Stalls.thresholdUsec(floors[0]);
        j.key("stalls").beginObject().field("threshold_usec", t).field("floor_t_typical_factor", Stalls.FACTOR);
        j.key("per_second").beginObject().field("jhca", Stalls.perSecond(rdma, t));
        for (UdpFloor f : UdpFloor.values()) {
            LatencyStats u = floors[f.ordinal()];
            if (u != null) {
                j.field(f.json, Stalls.perSecond(u, t));
            }
        }
        j.endObject().endObject();
    }

    private static void latency(JsonOut j, LatencyStats s) {
        j.field("MsgSize", s.size()).field("n_iterations", s.iters());
        if (s.duration()) {
            j.field("t_avg", s.tAvg()).field("tps_average", s.tps());
        } else {
            j.field("t_min", s.tMin()).field("t_max", s.tMax()).field("t_typical", s.tTypical()).field("t_avg", s.tAvg())
                    .field("t_stdev", s.tStdev()).field("percentile_99", s.p99()).field("percentile_99.9", s.p999());
        }
        histogram(j, s.histogramNs(), 1000.0 * s.rttFactor());
    }

    /** Every non-empty bucket as [value, count] in usec per direction, and the percentile curve. */
    private static void histogram(JsonOut j, Histogram h, double divisor) {
        j.key("histogram").beginObject().field("unit", "usec").field("rtt_divisor", (long) (divisor / 1000))
                .field("total_count", h.getTotalCount()).field("significant_digits", h.getNumberOfSignificantValueDigits());
        j.key("buckets").beginArray();
        for (HistogramIterationValue v : h.recordedValues()) {
            j.beginArray().value(h.highestEquivalentValue(v.getValueIteratedTo()) / divisor)
                    .value(v.getCountAtValueIteratedTo()).endArray();
        }
        j.endArray();
        j.key("percentiles").beginArray();
        if (h.getTotalCount() > 0) {
            for (HistogramIterationValue v : h.percentiles(5)) {
                j.beginArray().value(v.getPercentileLevelIteratedTo()).value(v.getValueIteratedTo() / divisor).endArray();
                if (v.getPercentileLevelIteratedTo() >= 100.0) {
                    break;
                }
            }
        }
        j.endArray();
        j.endObject();
    }

    /** A stream floor's object under {@code key}, with the RDMA run's average as a share of it; nothing if not run. */
    private static void stream(JsonOut j, String key, BandwidthStats s, UdpStream.Result u) {
        if (u != null) {
            j.key(key).beginObject().field("BW_average_MiB", u.mibPerSec()).field("MsgRate", u.msgRate())
                    .field("ratio", PerfReport.ratio(s, u)).field("jit_compile_ms", u.jitMillis()).endObject();
        }
    }
}
