package io.jhca.lab;

import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.InputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every line format hwlab shares with perftest and rdma-core's tools, checked against the C library's printf
 * with the tools' own format strings (src/test/resources/io/jhca/lab/printf_oracle.c, compiled with gcc at
 * test time), over random values and the edge cases of C's conversions (%#x of 0, rounding ties, widths).
 */
class PrintfOracleTest {
    static Path oracle;

    @BeforeAll
    static void compile(@TempDir Path dir) throws Exception {
        File gcc = new File("/usr/bin/gcc");
        assertTrue(gcc.canExecute(), "this test needs gcc (Debian package gcc) to build its printf oracle");
        Path src = dir.resolve("printf_oracle.c");
        try (InputStream in = PrintfOracleTest.class.getResourceAsStream("printf_oracle.c")) {
            Files.write(src, in.readAllBytes());
        }
        oracle = dir.resolve("printf_oracle");
        Process p = new ProcessBuilder(gcc.getPath(), "-std=gnu11", "-O1", "-Wall", "-Wno-format", "-o", oracle.toString(),
                src.toString()).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS) && p.exitValue() == 0, "gcc failed:\n" + log);
    }

    static List<String> c(List<String> requests) throws Exception {
        // requests from a file, so a large output can never fill the pipe while we are still writing input
        Path in = Files.createTempFile(oracle.getParent(), "requests", ".txt");
        Files.writeString(in, String.join("\n", requests) + "\n", StandardCharsets.US_ASCII);
        Process p = new ProcessBuilder(oracle.toString()).redirectInput(in.toFile()).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        assertTrue(p.waitFor(30, TimeUnit.SECONDS));
        List<String> lines = List.of(out.split("\n", -1));
        assertEquals(requests.size() + 1, lines.size(), out); // trailing newline
        return lines.subList(0, requests.size());
    }

    static String hexd(double v) {
        return Double.toHexString(v);
    }

    /** Doubles that stress C's rounding: exact ties, values just off ties, huge and tiny ones. */
    static double[] doubles(Random r, int n) {
        double[] special = {0, 0.125, 0.375, 1.005, 2.675, 0.005, 0.015, 0.025, 12345.675, 1e-9, 99.995, 999999.995,
            0.0000005, 0.0000015, 1234567.125, 3.14159, 0.1, 0.7, 1e10};
        double[] d = new double[n];
        for (int i = 0; i < n; i++) {
            d[i] = i < special.length ? special[i] : switch (r.nextInt(4)) {
                case 0 -> r.nextInt(100000) / 1000.0; // three decimals: many exact-decimal ties at two
                case 1 -> r.nextDouble() * 100;
                case 2 -> Math.round(r.nextDouble() * 1e6) / 8.0; // binary-exact ties
                default -> r.nextDouble() * 1e-3;
            };
        }
        return d;
    }

    @Test
    void latencyAndBandwidthRows() throws Exception {
        Random r = new Random(7);
        double[] v = doubles(r, 600);
        List<String> req = new ArrayList<>();
        List<String> java = new ArrayList<>();
        for (int i = 0; i + 7 <= v.length; i += 7) {
            long size = 1L << r.nextInt(24);
            long iters = 5 + r.nextInt(100000);
            req.add("lat " + size + " " + iters + " " + hexd(v[i]) + " " + hexd(v[i + 1]) + " " + hexd(v[i + 2]) + " "
                    + hexd(v[i + 3]) + " " + hexd(v[i + 4]) + " " + hexd(v[i + 5]) + " " + hexd(v[i + 6]));
            java.add(new LatencyStats((int) size, iters, v[i], v[i + 1], v[i + 2], v[i + 3], v[i + 4], v[i + 5], v[i + 6],
                    null, 2, false, 0).row());
            req.add("latdur " + size + " " + iters + " " + hexd(v[i + 3]) + " " + hexd(v[i + 4]));
            java.add(new LatencyStats((int) size, iters, 0, 0, 0, v[i + 3], 0, 0, 0, null, 2, true, v[i + 4]).row());
            req.add("bw " + size + " " + iters + " " + hexd(v[i]) + " " + hexd(v[i + 1]) + " " + hexd(v[i + 2]));
            java.add(new BandwidthStats(size, iters, v[i], v[i + 1], v[i + 2], false).row());
            double small = v[i + 1] % 0.1; // --report_gbits below 0.1 Gb/sec switches to REPORT_FMT_EXT
            req.add("bwext " + size + " " + iters + " " + hexd(v[i]) + " " + hexd(small) + " " + hexd(v[i + 2]));
            java.add(new BandwidthStats(size, iters, v[i], small, v[i + 2], true).row());
        }
        assertLinesEqual(c(req), java);
    }

    @Test
    void keysAddressesAndGids() throws Exception {
        Random r = new Random(11);
        List<String> req = new ArrayList<>();
        List<String> java = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            int lid = i < 3 ? 0 : r.nextInt(0x10000);
            int out = i < 3 ? i : r.nextInt(0x10000);
            int qpn = i == 0 ? 0 : r.nextInt(1 << 24);
            int psn = i == 1 ? 0 : r.nextInt(1 << 24) >> r.nextInt(20);
            int rkey = i == 2 ? 0 : r.nextInt();
            long vaddr = i == 2 ? 0 : r.nextLong() >>> r.nextInt(48);
            byte[] g = new byte[16];
            r.nextBytes(g);
            if (i % 3 == 0) {
                g = Gid.parse("00000000000000000000ffff7f000001").bytes();
            }
            int srqn = r.nextInt();
            PerftestDest d = new PerftestDest(lid, out, qpn, psn, rkey, vaddr, Gid.of(g), srqn);
            StringBuilder sb = new StringBuilder("key " + lid + " " + out + " " + qpn + " " + psn + " " + Integer.toUnsignedString(rkey)
                    + " " + Long.toUnsignedString(vaddr));
            StringBuilder gid = new StringBuilder("gid");
            for (byte b : g) {
                sb.append(' ').append(b & 0xff);
                gid.append(' ').append(b & 0xff);
            }
            req.add(sb.append(' ').append(Integer.toUnsignedString(srqn)).toString());
            java.add(d.text());
            req.add("keyn " + lid + " " + out + " " + qpn + " " + psn + " " + Integer.toUnsignedString(rkey) + " "
                    + Long.toUnsignedString(vaddr) + " " + Integer.toUnsignedString(srqn));
            java.add(new PerftestDest(lid, out, qpn, psn, rkey, vaddr, null, srqn).text());
            for (PerfTest.Verb verb : PerfTest.Verb.values()) {
                String side = r.nextBoolean() ? "local" : "remote";
                req.add("addr " + side + " " + verb.ordinal() + " " + lid + " " + qpn + " " + psn + " " + out + " "
                        + Integer.toUnsignedString(rkey) + " " + Long.toUnsignedString(vaddr));
                java.add(PerfReport.addressLine(side, verb, d));
            }
            req.add(gid.toString());
            java.add(PerfReport.gidLine(Gid.of(g)));
            PingpongDest pp = new PingpongDest(lid, qpn, psn, Gid.of(g));
            req.add("ppmsg " + lid + " " + qpn + " " + psn + " " + HexFormat.of().formatHex(g));
            java.add(pp.text());
            String side = r.nextBoolean() ? "local" : "remote";
            req.add("ppaddr " + side + " " + lid + " " + qpn + " " + psn + " " + Inet6Text.format(g));
            java.add(RcPingpong.addressLine(side, pp));
            long guid = r.nextLong();
            req.add("guid " + Long.toUnsignedString(guid));
            java.add(DevinfoCommand.guid(guid));
            req.add("dev rxe" + i + " " + Long.toUnsignedString(guid));
            StringWriter sw = new StringWriter();
            DevicesCommand.print(List.of(new DeviceInfo("rxe" + i, "rxe", guid, "InfiniBand")), new PrintWriter(sw));
            java.add(sw.toString().split("\n")[2]);
        }
        assertLinesEqual(c(req), java);
    }

    @Test
    void rcPingpongResultLines() throws Exception {
        Random r = new Random(3);
        List<String> req = new ArrayList<>();
        List<String> java = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            int size = 1 + r.nextInt(1 << r.nextInt(23));
            int iters = 1 + r.nextInt(100000);
            long micros = 1 + (r.nextLong() >>> (24 + r.nextInt(30)));
            req.add("rcpp " + size + " " + iters + " " + micros);
            String[] l = RcPingpong.resultLines(RcPingpong.result(micros, size, iters));
            java.add(l[0] + "|" + l[1]);
        }
        assertLinesEqual(c(req), java);
    }

    static void assertLinesEqual(List<String> expected, List<String> actual) {
        assertEquals(expected.size(), actual.size());
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i), actual.get(i), "line " + i);
        }
    }
}
