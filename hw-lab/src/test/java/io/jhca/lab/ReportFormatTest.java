package io.jhca.lab;

import io.jhca.verbs.Gid;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The printed lines, parsed back: what a script reading perftest output would see. */
class ReportFormatTest {

    static double[] numbers(String row) {
        String[] f = row.trim().split("\\s+");
        double[] d = new double[f.length];
        for (int i = 0; i < f.length; i++) {
            d[i] = Double.parseDouble(f[i]);
        }
        return d;
    }

    /** Deltas of i usec one-way (2i usec round trip) for i = 1..99, i.e. 100 iterations. */
    static long[] ramp() {
        long[] d = new long[99];
        for (int i = 0; i < d.length; i++) {
            d[i] = (i + 1) * 2000L;
        }
        return d;
    }

    @Test
    void latencyStatisticsFollowPerftest() {
        LatencyStats s = LatencyStats.of(2, ramp(), 2);
        // sorted 1..99 usec, the two largest dropped: m = 97
        assertEquals(100, s.iters());
        assertEquals(1.0, s.tMin(), 1e-9);
        assertEquals(98.0, s.tMax(), 1e-9, "t_max is delta[m], perftest's index");
        assertEquals(49.0, s.tTypical(), 1e-9, "median of 97 values");
        assertEquals(49.0, s.tAvg(), 1e-9);
        assertEquals(28.0, s.tStdev(), 1e-9, "sqrt((97^2 - 1) / 12)");
        assertEquals(98.0, s.p99(), 1e-9, "delta[ceil(97 * 0.99)]");
        assertEquals(98.0, s.p999(), 1e-9);
        assertEquals(99, s.histogramNs().getTotalCount(), "the histogram keeps every sample, tail included");
    }

    @Test
    void medianOfAnEvenCountAveragesTheMiddlePair() {
        long[] d = {1000, 2000, 3000, 4000, 9000, 9000}; // m = 4 after the tail: 1,2,3,4 usec (rtt factor 1)
        LatencyStats s = LatencyStats.of(8, d, 1);
        assertEquals(2.5, s.tTypical(), 1e-9);
        assertEquals(1.0, s.tMin(), 1e-9);
        assertEquals(9.0, s.tMax(), 1e-9);
    }

    @Test
    void latencyRowParsesBack() {
        LatencyStats s = LatencyStats.of(64, ramp(), 2);
        String row = s.row();
        assertTrue(row.startsWith(" 64      100"), row);
        double[] n = numbers(row);
        assertEquals(9, n.length, row);
        assertEquals(64, n[0]);
        assertEquals(100, n[1]);
        assertEquals(1.00, n[2]);
        assertEquals(98.00, n[3]);
        assertEquals(49.00, n[4]);
        assertEquals(49.00, n[5]);
        assertEquals(28.00, n[6]);
        assertEquals(98.00, n[7]);
        assertEquals(98.00, n[8]);
        assertEquals(" 64      100          1.00           98.00        49.00    \t       49.00       \t28.00  \t\t98.00   \t\t98.00  ", row);
    }

    @Test
    void bandwidthStatisticsAndRow() {
        // 10 messages of 1 MiB, posted 0..9 ms, completions every 2 messages; last completion at 20 ms
        BandwidthSamples s = new BandwidthSamples(1 << 20, 10, true, 10);
        for (int i = 0; i < 10; i++) {
            s.tposted[i] = 1_000_000L * i;
        }
        s.firstPost = 0;
        for (int k = 2; k <= 10; k += 2) {
            s.completed(k, 2_000_000L * k);
        }
        BandwidthStats b = BandwidthStats.of(s, false);
        assertEquals(10 / 0.020, b.bwAvg(), 1e-6, "10 MiB in 20 ms");
        assertEquals(10 / 0.020 / 1e6, b.msgRate(), 1e-12);
        // fastest stretch: posts 0..1 completed at 4 ms -> 2 ms per MiB; the best overall is 2 ms per message
        assertEquals(500.0, b.bwPeak(), 1e-6);
        double[] n = numbers(b.row());
        assertEquals(5, n.length);
        assertEquals(1 << 20, n[0]);
        assertEquals(10, n[1]);
        assertEquals(500.00, n[2]);
        assertEquals(500.00, n[3]);
        assertEquals(0.0005, n[4], 1e-9);

        BandwidthStats g = BandwidthStats.of(s, true);
        assertEquals(10 * 1048576 * 8 / 0.020 / 1e9, g.bwAvg(), 1e-9, "Gb/sec uses 125000000 bytes");
    }

    @Test
    void smallGbitsValuesGetSixDecimals() {
        BandwidthStats b = new BandwidthStats(2, 1000, 0.01234567, 0.0123456, 0.5, true);
        assertEquals(" 2          1000           0.012346            0.012346            0.500000", b.row());
    }

    @Test
    void headersAreExactlyPerftests() {
        assertEquals(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    t_avg[usec]    t_stdev[usec]"
                + "   99% percentile[usec]   99.9% percentile[usec] ", PerfReport.LAT_HEADER);
        assertEquals(" #bytes     #iterations    BW peak[MiB/sec]    BW average[MiB/sec]   MsgRate[Mpps]", PerfReport.BW_HEADER);
        assertEquals(" #bytes     #iterations    BW peak[Gb/sec]    BW average[Gb/sec]   MsgRate[Mpps]", PerfReport.BW_HEADER_GBITS);
        assertEquals(87, PerfReport.LINE.length());
    }

    @Test
    void addressLinesUseCAlternateHex() {
        PerftestDest d = new PerftestDest(0, 1, 0x11, 0x3d508a, 0x4a6, 0x7dc6b256a000L,
                Gid.parse("00000000000000000000ffff0a140001"), 0);
        assertEquals(" local address: LID 0000 QPN 0x0011 PSN 0x3d508a RKey 0x0004a6 VAddr 0x007dc6b256a000",
                PerfReport.addressLine("local", PerfTest.Verb.WRITE, d));
        assertEquals(" remote address: LID 0000 QPN 0x0011 PSN 0x3d508a OUT 0x01 RKey 0x0004a6 VAddr 0x007dc6b256a000",
                PerfReport.addressLine("remote", PerfTest.Verb.READ, d));
        assertEquals(" local address: LID 0000 QPN 0x0011 PSN 0x3d508a", PerfReport.addressLine("local", PerfTest.Verb.SEND, d));
        assertEquals(" GID: 00:00:00:00:00:00:00:00:00:00:255:255:10:20:00:01", PerfReport.gidLine(d.gid()));
        assertEquals("0000", CFormat.altHex(0, 4));
        assertEquals("0x2ebf5", CFormat.altHex(0x2ebf5, 6));
    }

    @Test
    void testTitlesAndJsonNames() {
        assertEquals("RDMA_Write Latency Test", PerfTest.WRITE_LAT.title());
        assertEquals("Atomic FETCH_AND_ADD Latency Test", PerfTest.ATOMIC_LAT.title());
        assertEquals("Send BW Test", PerfTest.SEND_BW.title());
        assertEquals("RDMA_Read_BW_Test", PerfTest.READ_BW.jsonName());
        assertEquals(2, PerfTest.SEND_LAT.rttFactor());
        assertEquals(1, PerfTest.READ_LAT.rttFactor());
    }

    @Test
    void devinfoHelpers() {
        assertEquals("0200:00ff:fe00:0001", DevinfoCommand.guid(0x020000fffe000001L));
        assertEquals("\t\t\tGID[  1]:\t\t::ffff:127.0.0.1, RoCE v2",
                DevinfoCommand.gidLine(1, Gid.parse("00000000000000000000ffff7f000001"), io.jhca.verbs.LinkLayer.ETHERNET));
        assertTrue(DevinfoCommand.nullGid(Gid.parse("fe800000000000000000000000000000")));
    }
}
