package io.jhca.lab;

import io.jhca.verbs.Gid;
import io.jhca.verbs.LinkLayer;

import java.io.PrintWriter;

/** perftest's screen output: banner, address lines, table headers (perftest_parameters.{c,h} 6.06 and HEAD). */
public final class PerfReport {
    /** RESULT_LINE: 87 dashes. */
    public static final String LINE = "---------------------------------------------------------------------------------------";
    /** RESULT_FMT_LAT. */
    public static final String LAT_HEADER =
            " #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]   99% percentile[usec]   99.9% percentile[usec] ";
    /** RESULT_FMT_LAT_DUR. */
    public static final String LAT_DUR_HEADER = " #bytes        #iterations       t_avg[usec]    tps average";
    /** RESULT_FMT as perftest HEAD prints it (6.06 still said "MB/sec" for the same 2^20-byte unit). */
    public static final String BW_HEADER = " #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]";
    /** RESULT_FMT_G (--report_gbits). */
    public static final String BW_HEADER_GBITS = " #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]";

    /** jhca's UDP stream floor table (bandwidth tests). */
    public static final String UDP_STREAM_HEADER = " #bytes     #iterations    BW average[MiB/sec]   MsgRate[Mpps]   jhca/UDP";

    private PerfReport() {
    }

    /** A row of the UDP stream floor, with the RDMA run's average as a share of it. */
    static String udpStreamRow(UdpStream.Result u, BandwidthStats rdma) {
        return String.format(java.util.Locale.ROOT, " %-10d %-10d     %-20.2f  %-14.6f  %.2f", u.size(), u.iters(),
                u.mibPerSec(), u.msgRate(), ratio(rdma, u));
    }

    /**
     * jhca's latency as a multiple of a UDP floor's at one size, per figure: t_typical, t_avg, 99% and 99.9% (only t_avg
     * in -D mode, which has no percentiles), {@code NaN} where the floor's figure is 0. With --latency_gap both sides'
     * times include the gap (perftest's way); it is taken off both first, so the ratio compares the round trips.
     */
    static double[] latencyRatios(LatencyStats rdma, LatencyStats floor, int gapUsec) {
        double g = gapUsec;
        if (rdma.duration()) {
            return new double[] {Double.NaN, div(rdma.tAvg() - g, floor.tAvg() - g), Double.NaN, Double.NaN};
        }
        return new double[] {div(rdma.tTypical() - g, floor.tTypical() - g), div(rdma.tAvg() - g, floor.tAvg() - g),
                div(rdma.p99() - g, floor.p99() - g), div(rdma.p999() - g, floor.p999() - g)};
    }

    private static double div(double a, double b) {
        return b > 0 ? a / b : Double.NaN;
    }

    /** The line under a floor's row: " 2       jhca / floor: t_typical 2.47x  t_avg 2.49x  99% 1.31x  99.9% 1.12x". */
    static String latencyRatioRow(LatencyStats rdma, LatencyStats floor, int gapUsec) {
        double[] r = latencyRatios(rdma, floor, gapUsec);
        String what = gapUsec > 0 ? "jhca / floor, the gap taken off both:" : "jhca / floor:";
        if (rdma.duration()) {
            return String.format(java.util.Locale.ROOT, " %-7d %s t_avg %sx", rdma.size(), what, CFormat.fixed(r[1], 2));
        }
        return String.format(java.util.Locale.ROOT, " %-7d %s t_typical %sx  t_avg %sx  99%% %sx  99.9%% %sx",
                rdma.size(), what, CFormat.fixed(r[0], 2), CFormat.fixed(r[1], 2), CFormat.fixed(r[2], 2), CFormat.fixed(r[3], 2));
    }

    /** The RDMA run's average bandwidth over the UDP stream's (both in bytes per second). */
    static double ratio(BandwidthStats rdma, UdpStream.Result u) {
        return rdma.bwAvg() * BandwidthStats.formatFactor(rdma.gbits()) / (1 << 20) / u.mibPerSec();
    }

    /** ctx_print_test_info, for an RC test, with or without rdma_cm (-R). */
    static void banner(PrintWriter out, PerfSide s, boolean server, String warmup) {
        PerfTest t = s.p.test();
        out.println(LINE);
        boolean mcg = s.p.mcg();
        // ctx_print_test_info: "Multicast " before "Test", then a line of its own
        out.println("                    " + (mcg ? t.title().replaceFirst("Test$", "Multicast Test") : t.title()));
        if (s.p.events()) {
            out.printf(" Test with events. Using %s_comp%d%n", s.ctx.name(), 0); // ctx_print_test_info, eq_num 0
        }
        if (mcg) {
            out.println(" MultiCast runs on UD!");
        }
        out.printf(" Dual-port       : %s\t\tDevice         : %s%n", "OFF", s.ctx.name());
        out.printf(" Number of qps   : %d\t\tTransport type : %s%n", s.p.numQps(),
                DevinfoCommand.transportValue(s.ctx.device().transport()) == 1 ? "IW" : "IB");
        out.printf(" Connection type : %s\t\tUsing SRQ      : %s%n", s.ud() ? "UD" : "RC", s.p.useSrq() ? "ON" : "OFF");
        out.printf(" PCIe relax order: %s%n", "Unsupported");
        out.printf(" ibv_wr* API     : %s%n", "ON");
        if (!server) {
            out.printf(" TX depth        : %d%n", s.txDepth);
        }
        if (t.verb() == PerfTest.Verb.SEND && server) {
            out.printf(" RX depth        : %d%n", s.rxDepth);
        }
        if (!t.latency()) {
            out.printf(" CQ Moderation   : %d%n", s.cqMod);
        }
        out.printf(" Mtu             : %d[B]%n", s.mtu.bytes());
        out.printf(" Link type       : %s%n", s.port.linkLayer() == LinkLayer.ETHERNET ? "Ethernet" : "IB");
        out.printf(" GID index       : %d%n", s.gidIndex);
        if (t.verb() != PerfTest.Verb.READ && t.verb() != PerfTest.Verb.ATOMIC) {
            out.printf(" Max inline data : %d[B]%n", s.inlineSize);
        } else {
            out.printf(" Outstand reads  : %d%n", s.outReads);
        }
        boolean cm = s.p.rdmaCm();
        out.printf(" rdma_cm QPs\t : %s%n", cm ? "ON" : "OFF");
        if (cm && server) {
            // the server's extra lines with work_rdma_cm (the text is perftest's)
            out.printf(" Data ex. method : %s%n", "rdma_cm");
            out.println(LINE);
            out.println(" Waiting for client rdma_cm QP to connect");
            out.println(" Please run the same command with the IB/RoCE interface IP");
        } else {
            out.printf(" Data ex. method : %s%n", cm ? "rdma_cm" : "Ethernet");
        }
        if (s.p.latencyGap() > 0) {
            // jhca's addition: perftest waits the gap silently, and its times include it
            out.printf(" Latency gap     : %d usec before each post (included in the times)%n", s.p.latencyGap());
        }
        if (warmup != null) {
            // jhca's addition: perftest measures from the first iteration; a JVM would be timing its JIT
            out.printf(" Warm-up         : %s%n", warmup);
        }
        out.println(LINE);
        out.flush();
    }

    /**
     * ctx_print_pingpong_data: BASIC_ADDR_FMT " %s address: LID %#04x QPN %#06x PSN %#06x", then for READ
     * " OUT %#04x" and for READ and WRITE " RKey %#08x VAddr %#016llx", then the GID line.
     */
    public static String addressLine(String side, PerfTest.Verb verb, PerftestDest d) {
        StringBuilder sb = new StringBuilder();
        sb.append(' ').append(side).append(" address: LID ").append(CFormat.altHex(d.lid(), 4)).append(" QPN ")
                .append(CFormat.altHex(d.qpn(), 6)).append(" PSN ").append(CFormat.altHex(d.psn(), 6));
        if (verb == PerfTest.Verb.READ) {
            sb.append(" OUT ").append(CFormat.altHex(d.outReads(), 4));
        }
        if (verb == PerfTest.Verb.READ || verb == PerfTest.Verb.WRITE) {
            sb.append(" RKey ").append(CFormat.altHex(d.rkey() & 0xFFFFFFFFL, 8)).append(" VAddr ")
                    .append(CFormat.altHex(d.vaddr(), 16));
        }
        return sb.toString();
    }

    /** PERF_GID_FMT " %s: %02d:%02d:...": perftest prints the GID bytes in decimal. */
    public static String gidLine(Gid g) {
        return gidLine(g, false);
    }

    /** As {@link #gidLine(Gid)}, labelled "MGID" for a multicast group's (gidArray). */
    public static String gidLine(Gid g, boolean mgid) {
        StringBuilder sb = new StringBuilder(mgid ? " MGID: " : " GID: ");
        for (int i = 0; i < Gid.LENGTH; i++) {
            sb.append(i == 0 ? "" : ":").append(CFormat.pad(Integer.toString(g.get(i) & 0xff), 2));
        }
        return sb.toString();
    }

    static void address(PrintWriter out, String side, PerfTest.Verb verb, PerftestDest d) {
        address(out, side, verb, d, false);
    }

    static void address(PrintWriter out, String side, PerfTest.Verb verb, PerftestDest d, boolean mgid) {
        out.println(addressLine(side, verb, d));
        if (d.gid() != null) {
            out.println(gidLine(d.gid(), mgid));
        }
    }

    static String header(PerfParams p) {
        if (p.test().latency()) {
            return p.durationMode() ? LAT_DUR_HEADER : LAT_HEADER;
        }
        return p.reportGbits() ? BW_HEADER_GBITS : BW_HEADER;
    }
}
