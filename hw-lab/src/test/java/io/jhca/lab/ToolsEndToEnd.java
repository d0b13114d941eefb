package io.jhca.lab;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.awt.image.BufferedImage;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.imageio.ImageIO;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jhca.testkit.ThreadPerTask;
import io.jhca.verbs.Gid;

/**
 * One run of every tool on a pair of devices (two in this JVM), with small iteration counts, checking the output
 * by parsing it back. Subclasses name the devices: the test-only loop provider always, rxe0/rxe1 when the rxe
 * provider is on the class path.
 */
abstract class ToolsEndToEnd {
    static final int ITERS = 50;
    /** Unmeasured iterations before the measured ones: more than 256, so the byte counter wraps within them. */
    static final int WARMUP = 300;

    /** The server-side device (GID ::ffff:127.0.0.1) and the client-side one (::ffff:127.0.0.2). */
    abstract String dev0();

    abstract String dev1();

    /** The IPv4 addresses of their GIDs (index 1). */
    String ip0() {
        return "127.0.0.1";
    }

    String ip1() {
        return "127.0.0.2";
    }

    /** perftest's decimal GID line for an IPv4-mapped GID. */
    static String perfGid(String ip) {
        StringBuilder sb = new StringBuilder(" GID: 00:00:00:00:00:00:00:00:00:00:255:255");
        for (String o : ip.split("\\.")) {
            sb.append(':').append(CFormat.pad(o, 2));
        }
        return sb.toString();
    }

    record Run(int rc, String out, String err) {
        Run ok() {
            assertEquals(0, rc, "exit code; stderr:\n" + err + "\nstdout:\n" + out);
            return this;
        }
    }

    static Run run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int rc = HwLab.execute(args, new PrintWriter(o), new PrintWriter(e));
        return new Run(rc, o.toString(), e.toString());
    }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    static List<String> rows(String out, String header) {
        String[] lines = out.split("\n");
        List<String> rows = new ArrayList<>();
        boolean in = false;
        for (String l : lines) {
            if (l.equals(header)) {
                in = true;
                continue;
            }
            if (in) {
                if (l.startsWith("---")) {
                    break;
                }
                rows.add(l);
            }
        }
        return rows;
    }

    static double[] numbers(String row) {
        return ReportFormatTest.numbers(row);
    }

    @Test
    void devicesListsBoth() {
        String out = run("devices").ok().out();
        assertTrue(out.startsWith("    device          \t   node GUID\n    ------          \t----------------\n"), out);
        assertTrue(Pattern.compile("(?m)^    " + dev0() + " +\t[0-9a-f]{16}$").matcher(out).find(), out);
        assertTrue(Pattern.compile("(?m)^    " + dev1() + " +\t[0-9a-f]{16}$").matcher(out).find(), out);
    }

    @Test
    void devinfoVerbose() {
        String out = run("devinfo", "-d", dev0(), "-v").ok().out();
        assertTrue(out.startsWith("hca_id:\t" + dev0() + "\n"), out);
        assertTrue(Pattern.compile("(?m)^\tnode_guid:\t\t\t[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}:[0-9a-f]{4}$").matcher(out).find(), out);
        assertTrue(out.contains("\t\tport:\t1\n"), out);
        assertTrue(out.contains("\t\t\tstate:\t\t\tPORT_ACTIVE (4)\n"), out);
        assertTrue(out.contains("\t\t\tlink_layer:\t\tEthernet\n"), out);
        assertTrue(out.contains("\t\t\tGID[  1]:\t\t::ffff:" + ip0() + ", RoCE v2\n"), out);
        String list = run("devinfo", "-l").ok().out();
        assertTrue(list.contains("\t" + dev0() + "\n") && list.contains("\t" + dev1() + "\n"), list);
    }

    static final Pattern ADDR = Pattern.compile(
            "(?m)^  (local|remote) address: {1,2}LID 0x([0-9a-f]{4}), QPN 0x([0-9a-f]{6}), PSN 0x([0-9a-f]{6}), GID (\\S+)$");

    @Test
    void rcPingpong() throws Exception {
        rcPingpongRun(false);
    }

    /** ibv_rc_pingpong between the two devices, both sides with -e ({@code events}) or neither. */
    void rcPingpongRun(boolean events) throws Exception {
        StringWriter serverOut = new StringWriter();
        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<RcPingpong.Result> server = CompletableFuture.supplyAsync(() -> {
            try {
                return new RcPingpong(new RcPingpong.Options(dev0(), 1, null, 4096, ITERS, 1024, 100, 0, 0, null, null, 30000,
                        events),
                        new PrintWriter(serverOut, true)).onListening(port::complete).run();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, ThreadPerTask.EXECUTOR);
        server.whenComplete((r, t) -> {
            if (t != null) {
                port.completeExceptionally(t); // fail now rather than time out waiting for the port
            }
        });
        int p = port.get(30, TimeUnit.SECONDS);
        // the server listens on its GID's address (loopback): that is where a client connects
        List<String> args = new ArrayList<>(List.of("rc-pingpong", "-d", dev1(), "-n", Integer.toString(ITERS), "-r", "100",
                "-p", Integer.toString(p)));
        if (events) {
            args.add("-e");
        }
        args.add(ip0());
        Run client = run(args.toArray(new String[0])).ok();
        RcPingpong.Result sr = server.get(60, TimeUnit.SECONDS);
        assertEquals((long) 4096 * ITERS * 2, sr.bytes());

        Matcher c = ADDR.matcher(client.out());
        Matcher s = ADDR.matcher(serverOut.toString());
        String[][] ca = new String[2][];
        String[][] sa = new String[2][];
        for (int i = 0; i < 2; i++) {
            assertTrue(c.find(), client.out());
            assertTrue(s.find(), serverOut.toString());
            ca[i] = new String[] {c.group(1), c.group(3), c.group(4), c.group(5)};
            sa[i] = new String[] {s.group(1), s.group(3), s.group(4), s.group(5)};
        }
        assertEquals("local", ca[0][0]);
        assertEquals("remote", ca[1][0]);
        assertEquals("::ffff:" + ip1(), ca[0][3]);
        assertEquals("::ffff:" + ip0(), ca[1][3]);
        // what each side printed as remote is what the other printed as local: QPN, PSN and GID crossed the wire
        assertEquals(ca[0][1] + ca[0][2] + ca[0][3], sa[1][1] + sa[1][2] + sa[1][3]);
        assertEquals(sa[0][1] + sa[0][2] + sa[0][3], ca[1][1] + ca[1][2] + ca[1][3]);
        assertTrue(client.out().contains("  using GID index 1"), client.out());
        Matcher bytes = Pattern.compile("(?m)^(\\d+) bytes in (\\d+\\.\\d\\d) seconds = (\\d+\\.\\d\\d) Mbit/sec$").matcher(client.out());
        assertTrue(bytes.find(), client.out());
        assertEquals(4096L * ITERS * 2, Long.parseLong(bytes.group(1)));
        Matcher iters = Pattern.compile("(?m)^(\\d+) iters in (\\d+\\.\\d\\d) seconds = (\\d+\\.\\d\\d) usec/iter$").matcher(client.out());
        assertTrue(iters.find(), client.out());
        assertEquals(ITERS, Integer.parseInt(iters.group(1)));
        assertTrue(Double.parseDouble(iters.group(3)) > 0);
    }

    /** What a client that is not ibv_rc_pingpong (or ibv_srq_pingpong) does on its TCP connection. */
    interface RawClient {
        void talk(InputStream in, OutputStream out) throws IOException;
    }

    /** A pingpong server's run, telling {@code onListening} its TCP port. */
    interface PingpongServer {
        RcPingpong.Result run(IntConsumer onListening) throws IOException;
    }

    /**
     * For each {@code {RawClient, reason}}: starts a server, lets the client talk to it on {@code host}, and asserts
     * the server ends with an error naming the reason. The connection stays open until the server gives up, as a
     * client host gone closes nothing.
     */
    static void assertServerEndsOnEach(PingpongServer server, String host, Object[][] clients) throws Exception {
        for (Object[] c : clients) {
            CompletableFuture<Integer> port = new CompletableFuture<>();
            CompletableFuture<RcPingpong.Result> run = CompletableFuture.supplyAsync(() -> {
                try {
                    return server.run(port::complete);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }, ThreadPerTask.EXECUTOR);
            try (Socket s = new Socket(host, port.get(30, TimeUnit.SECONDS))) {
                ((RawClient) c[0]).talk(s.getInputStream(), s.getOutputStream());
                ExecutionException e = assertThrows(ExecutionException.class, () -> run.get(20, TimeUnit.SECONDS));
                assertTrue(HwLab.describe(e.getCause()).contains((String) c[1]), c[1] + ": " + HwLab.describe(e));
            }
        }
    }

    /**
     * An rc-pingpong server against clients that are not ibv_rc_pingpong: one that sends an all-zero GID, one that
     * answers the server's address with something other than "done", one that connects and says nothing. Each ends
     * the server with its reason, the silent one after the stall timeout (500 ms here), not a wait for ever.
     */
    @Test
    void rcPingpongServerEndsOnAClientThatIsNotOne() throws Exception {
        PingpongDest good = new PingpongDest(0, 0x11, 0x22, Gid.of(InetAddress.getByName(ip1())));
        PingpongDest zero = new PingpongDest(0, 0x11, 0x22, Gid.ZERO);
        RawClient zeroGid = (in, out) -> out.write(zero.encode());
        RawClient notDone = (in, out) -> {
            out.write(good.encode());
            in.readNBytes(PingpongDest.SIZE);
            out.write("nope\0".getBytes(StandardCharsets.US_ASCII));
        };
        RawClient silent = (in, out) -> { };
        assertServerEndsOnEach(onListening -> new RcPingpong(new RcPingpong.Options(dev0(), 1, null, 4096, ITERS, 1024,
                100, 0, 0, null, null, 500), new PrintWriter(new StringWriter(), true)).onListening(onListening).run(),
                ip0(), new Object[][] {{zeroGid, "all-zero GID"}, {notDone, "expected \"done\""},
                    {silent, "timed out waiting for the peer"}});
    }

    /** Runs a latency test in-process and checks the row it printed. */
    LatencyRow latency(String test, String... extra) {
        List<String> args = new ArrayList<>(List.of("perf", test, "-d", dev0(), "--peer-dev", dev1()));
        args.addAll(List.of(extra));
        if (!args.contains("-n")) {
            args.addAll(List.of("-n", Integer.toString(ITERS)));
        }
        if (!args.contains("--warmup")) {
            args.addAll(List.of("--warmup", Integer.toString(ITERS))); // the warm-up path, at a test's size
        }
        if (!args.contains("--warmup") && !args.contains("-D")) {
            args.addAll(List.of("--warmup", Integer.toString(WARMUP))); // the measured count stays -n (below)
        }
        Run r = run(args.toArray(new String[0])).ok();
        if (args.contains("--warmup") && !args.contains("-D")) {
            String w = args.get(args.indexOf("--warmup") + 1);
            String n = args.get(args.indexOf("-n") + 1);
            assertTrue(r.out().contains(" Warm-up         : " + w + " iterations before the " + n + " measured"), r.out());
        }
        List<String> rows = rows(r.out(), PerfReport.LAT_HEADER);
        assertTrue(rows.size() >= 1, r.out());
        double[] n = numbers(rows.get(0));
        assertEquals(9, n.length, rows.get(0));
        assertEquals(ITERS, (int) n[1]);
        assertTrue(n[2] > 0 && n[2] <= n[4] && n[4] <= n[3], "t_min <= t_typical <= t_max: " + rows.get(0));
        assertTrue(r.out().contains(" JVM: ") && r.out().contains("GC cycles during measurement: "), r.out());
        assertTrue(r.out().contains(" Machine: " + Runtime.getRuntime().availableProcessors() + " CPUs, ")
                && r.out().contains(" | a null system call (getppid): "), "the machine is named: " + r.out());
        return new LatencyRow(r, n);
    }

    record LatencyRow(Run run, double[] n) {
    }

    @Test
    void writeLat() {
        LatencyRow r = latency("write-lat");
        assertEquals(2, (int) r.n()[0]);
        assertTrue(r.run().out().contains("                    RDMA_Write Latency Test\n"), r.run().out());
        assertTrue(r.run().out().contains(" UDP floor: the same ping-pong over plain UDP DatagramChannels " + ip1() + " <-> " + ip0()),
                r.run().out());
        // and the floor that moves what RC must: a 20-byte ACK datagram back for every message, one row per size
        Matcher ackFloor = Pattern.compile("(?m)^ UDP floor with RoCE's ACKs: .*\n 2 +(\\d+) ").matcher(r.run().out());
        assertTrue(ackFloor.find(), r.run().out());
        assertEquals(ITERS, Integer.parseInt(ackFloor.group(1)), r.run().out());
        // under each floor's row, jhca's figures as multiples of the floor's, computed from the two rows printed
        double[] jhca = r.n();
        Matcher plain = Pattern.compile("(?m)^ UDP floor: .*\n.*\n( 2 +.*)$").matcher(r.run().out());
        assertTrue(plain.find(), r.run().out());
        Matcher ratio = Pattern.compile("(?m)^ 2 +jhca / floor: t_typical ([0-9.]+)x  t_avg ([0-9.]+)x  99% ([0-9.]+)x"
                + "  99\\.9% ([0-9.]+)x$").matcher(r.run().out());
        assertTrue(ratio.find(), r.run().out());
        double[] floor = numbers(plain.group(1));
        assertEquals(jhca[4] / floor[4], Double.parseDouble(ratio.group(1)), 0.01 + jhca[4] / floor[4] * 0.01, r.run().out());
        assertEquals(jhca[5] / floor[5], Double.parseDouble(ratio.group(2)), 0.01 + jhca[5] / floor[5] * 0.01, r.run().out());
        assertTrue(ratio.find(), "a second ratio line, under the floor with ACKs: " + r.run().out());
        // and the same datagrams as jhca sends them: each ACK with the message after it, one sendmmsg
        Matcher batchedFloor = Pattern.compile("(?m)^ UDP floor with batched ACKs: .*\n( 2 +(\\d+) .*)$")
                .matcher(r.run().out());
        assertTrue(batchedFloor.find(), r.run().out());
        assertEquals(ITERS, Integer.parseInt(batchedFloor.group(2)), r.run().out());
        assertTrue(ratio.find(), "a third ratio line, under the floor with batched ACKs: " + r.run().out());
        double[] batched = numbers(batchedFloor.group(1));
        assertEquals(jhca[4] / batched[4], Double.parseDouble(ratio.group(1)), 0.01 + jhca[4] / batched[4] * 0.01,
                r.run().out());
        assertTrue(batched[4] > 0 && batched[0] == 2, "a floor row of 2-byte messages: " + batchedFloor.group(1));
        assertTrue(Pattern.compile("(?m)^ local address: LID 0000 QPN 0x[0-9a-f]{4,6} PSN 0x[0-9a-f]+ RKey 0x[0-9a-f]+ VAddr 0x[0-9a-f]+$")
                .matcher(r.run().out()).find(), r.run().out());
        assertTrue(r.run().out().contains(perfGid(ip1()) + "\n"), r.run().out());
        assertTrue(r.run().out().contains(perfGid(ip0()) + "\n"), r.run().out());
    }

    /**
     * --latency_gap, as perftest: each post waits the gap before its time is taken, so every time includes it
     * (write-lat: both sides wait, RTT/2 + gap; read-lat: the client alone, RTT + gap), the floors wait the same, and
     * the ratio under each floor takes the gap off both sides; the warm-up does not wait.
     */
    @Test
    void latencyGapIsInEveryTimeAndOffTheRatios() {
        int gapUsec = 3000;
        for (String test : List.of("write-lat", "read-lat")) {
            LatencyRow r = latency(test, "--warmup", "200", "--latency_gap", Integer.toString(gapUsec));
            String out = r.run().out();
            assertTrue(out.contains(" Latency gap     : 3000 usec before each post (included in the times)\n"), out);
            assertTrue(r.n()[2] >= gapUsec, "t_min includes the gap: " + out);
            Matcher plain = Pattern.compile("(?m)^ UDP floor: .*\n.*\n( 2 +.*)$").matcher(out);
            assertTrue(plain.find(), out);
            double[] floor = numbers(plain.group(1));
            assertTrue(floor[2] >= gapUsec, "the floor's t_min includes the gap too: " + out);
            Matcher ratio = Pattern.compile("(?m)^ 2 +jhca / floor, the gap taken off both: t_typical ([0-9.]+)x  t_avg"
                    + " ([0-9.]+)x").matcher(out);
            assertTrue(ratio.find(), out);
            double want = (r.n()[4] - gapUsec) / (floor[4] - gapUsec);
            assertEquals(want, Double.parseDouble(ratio.group(1)), 0.01 + want * 0.02, out);
        }
    }

    @Test
    void writeLatLargerThanInlineAndMtu() {
        LatencyRow r = latency("write-lat", "-s", "3000", "--no-udp-baseline");
        assertEquals(3000, (int) r.n()[0]);
        assertTrue(!r.run().out().contains("UDP floor"), r.run().out());
    }

    @Test
    void sendLat() {
        assertEquals(2, (int) latency("send-lat").n()[0]);
        assertEquals(5000, (int) latency("send-lat", "-s", "5000").n()[0]);
    }

    @Test
    void readLat() {
        assertEquals(64, (int) latency("read-lat", "-s", "64").n()[0]);
    }

    @Test
    void atomicLat() {
        LatencyRow r = latency("atomic-lat");
        assertEquals(8, (int) r.n()[0]);
        assertTrue(r.run().out().contains("Atomic FETCH_AND_ADD Latency Test"), r.run().out());
    }

    /** -D: perftest's duration mode prints its own table (t_avg and transactions per second). */
    @Test
    void durationMode(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("dur.json");
        Run lat = run("perf", "send-lat", "-d", dev0(), "--peer-dev", dev1(), "-D", "1", "-f", "0",
                "--json", json.toString()).ok();
        List<String> rows = rows(lat.out(), PerfReport.LAT_DUR_HEADER);
        assertEquals(1, rows.size(), lat.out());
        double[] n = numbers(rows.get(0));
        assertEquals(4, n.length, rows.get(0));
        assertTrue(n[1] > 0 && n[2] > 0 && n[3] > 0, rows.get(0));
        assertEquals(n[1], n[3], 0.01 * n[1] + 1, "one-second window: transactions per second = iterations");
        JsonNode j = new ObjectMapper().readTree(json.toFile());
        assertEquals(1, j.at("/test_info/Duration").asInt());
        assertEquals((long) n[1], j.at("/results/0/n_iterations").asLong());
        assertTrue(j.at("/results/0/tps_average").asDouble() > 0);
        // the RDMA run leaves its first seconds out; its floors, 1000 round trips, warm up as an -n run would
        assertEquals(0, j.at("/hwlab/warmup_iterations").asInt());
        assertEquals(PerfTestCommand.IN_PROCESS_WARMUP, j.at("/udp_baseline_warmup_iterations").asInt(), j.toString());
        assertTrue(j.at("/results/0/udp_baseline/t_typical").asDouble() > 0, j.toString());

        Run bw = run("perf", "write-bw", "-d", dev0(), "--peer-dev", dev1(), "-D", "1", "-f", "0", "-s", "4096").ok();
        double[] b = numbers(rows(bw.out(), PerfReport.BW_HEADER).get(0));
        assertTrue(b[1] > 0 && b[3] > 0, bw.out());
        assertEquals(0.0, b[2], "no peak in duration mode, as perftest");
        assertTrue(bw.out().contains(" UDP stream floor: messages of the same size for as long as the sample window"),
                "-D: the floor streams for the window, not jhca's message count:\n" + bw.out());
    }

    BwRow bandwidth(String test, String... extra) {
        List<String> args = new ArrayList<>(List.of("perf", test, "-d", dev0(), "--peer-dev", dev1()));
        args.addAll(List.of(extra));
        if (!args.contains("-n")) {
            args.addAll(List.of("-n", Integer.toString(ITERS)));
        }
        if (!args.contains("--warmup")) {
            args.addAll(List.of("--warmup", Integer.toString(ITERS))); // the warm-up path, at a test's size
        }
        Run r = run(args.toArray(new String[0])).ok();
        boolean gbits = args.contains("--report_gbits");
        List<String> rows = rows(r.out(), gbits ? PerfReport.BW_HEADER_GBITS : PerfReport.BW_HEADER);
        assertTrue(rows.size() >= 1, r.out());
        double[] n = numbers(rows.get(0));
        assertEquals(5, n.length, rows.get(0));
        assertTrue(n[3] >= 0 && n[4] > 0, "BW average and message rate: " + rows.get(0));
        return new BwRow(r, n, rows);
    }

    record BwRow(Run run, double[] n, List<String> rows) {
    }

    @Test
    void writeBw() {
        BwRow r = bandwidth("write-bw", "-s", "16384");
        assertEquals(16384, (int) r.n()[0]);
        assertEquals(ITERS, (int) r.n()[1]);
        assertTrue(r.n()[2] >= r.n()[3] * 0.999, "peak >= average: " + r.rows());
        // the UDP stream floor of the same bytes, and jhca's share of it
        assertTrue(r.run().out().contains(" UDP stream floor: the same bytes over plain UDP DatagramChannels " + ip1() + " -> "
                + ip0()), r.run().out());
        double[] u = numbers(rows(r.run().out(), PerfReport.UDP_STREAM_HEADER).get(0));
        assertEquals(5, u.length, r.run().out());
        assertEquals(16384, (int) u[0]);
        assertEquals(ITERS, (int) u[1]);
        assertTrue(u[2] > 0 && u[4] > 0, "UDP bandwidth and the ratio: " + r.run().out());
        // both measurements say how much the JIT compiled while they ran
        assertTrue(r.run().out().matches("(?s).* JIT compiling during the floor's measurement: \\d+ ms\n.*"), r.run().out());
        assertTrue(r.run().out().matches("(?s).* JIT compiling during measurement: \\d+ ms.*"), r.run().out());
        // and whether the run lost packets: the client device's retransmissions, timeouts and NAKs over the window
        // (rxe's counter names; the loop provider keeps none, the ConnectX model its Q counters)
        assertTrue(!dev1().startsWith("rxe") || r.run().out().matches("(?s).*\n Device " + dev1()
                + " during measurement \\(packets lost and recovered\\): retransmitted_pkts \\d+, "
                + "local_ack_timeout_err \\d+, rcvd_seq_err \\d+, rcvd_rnr_err \\d+, out_of_sequence \\d+, duplicate_request \\d+\n.*"), r.run().out());
    }

    /** --repeat N: N whole runs, then each run's jhca/floor ratio as its report printed it, and their median. */
    @Test
    void repeatEndsWithEveryRunsRatioAndTheMedian() {
        Run r = bandwidth("write-bw", "-s", "4096", "--repeat", "3").run();
        String out = r.out();
        for (int i = 1; i <= 3; i++) {
            assertTrue(out.contains(" run " + i + " of 3\n"), out);
        }
        // the plain floor, and the one by GSO that a loopback rxe device's bursts get (the default devices send them)
        List<String> kinds = dev0().startsWith("rxe") ? List.of(" UDP stream floor:", " UDP stream floor by GSO:")
                : List.of(" UDP stream floor:");
        assertEquals(dev0().startsWith("rxe"), out.contains(" UDP stream floor by GSO:"), out);
        String[] lines = out.split("\n");
        for (String floor : kinds) {
            List<String> floors = new ArrayList<>();
            for (int i = 1; i + 1 < lines.length; i++) {
                if (lines[i].equals(PerfReport.UDP_STREAM_HEADER) && lines[i - 1].startsWith(floor)) {
                    double[] u = numbers(lines[i + 1]);
                    floors.add(String.format(java.util.Locale.ROOT, "%.2f", u[u.length - 1]));
                }
            }
            assertEquals(3, floors.size(), floor + " " + out);
            String name = floor.substring(1, floor.length() - 1);
            Matcher m = Pattern.compile("(?m)^ 4096 +BW average / " + name + ": (\\S+) (\\S+) (\\S+)  median (\\S+)$")
                    .matcher(out);
            assertTrue(m.find(), name + " " + out);
            assertEquals(floors, List.of(m.group(1), m.group(2), m.group(3)), "the runs' own ratios, in order: " + out);
            double[] v = {Double.parseDouble(m.group(1)), Double.parseDouble(m.group(2)), Double.parseDouble(m.group(3))};
            java.util.Arrays.sort(v);
            assertEquals(v[1], Double.parseDouble(m.group(4)), 0.011, "the median of three is the middle one: " + out);
        }

        assertEquals(2, run("perf", "write-bw", "--repeat", "0").rc());
        assertEquals(2, run("perf", "write-bw", "--repeat", "2", "--server").rc());
        Run json = run("perf", "write-bw", "--repeat", "2", "--json", "x.json");
        assertEquals(2, json.rc());
        assertTrue(json.err().contains("--json and --plot describe one run"), json.err());
    }

    @Test
    void readBwTwoQps() {
        BwRow r = bandwidth("read-bw", "-s", "4096", "-q", "2", "--report_gbits");
        assertEquals(2 * ITERS, (int) r.n()[1], "iterations over all QPs");
    }

    @Test
    void sendBw() {
        BwRow r = bandwidth("send-bw", "-s", "2048", "-Q", "10");
        assertEquals(2048, (int) r.n()[0]);
    }

    @Test
    void sendBwWarmsUpBeforeMeasuring() {
        // both sides run the warm-up messages first (the server re-posting their receives), then the measured ones;
        // a count the two sides disagreed on, or a receive not re-posted, stalls the run
        BwRow r = bandwidth("send-bw", "-s", "2048", "-q", "2", "--warmup", Integer.toString(2 * ITERS),
                "--stall-timeout", "20");
        assertTrue(r.run().out().contains(" Warm-up         : " + 2 * ITERS + " iterations before the " + ITERS
                + " measured (not in the results)"), r.run().out());
        assertTrue(r.n()[2] >= r.n()[3] * 0.999, "peak >= average: " + r.rows());
        assertEquals(2 * ITERS, (int) r.n()[1], "only the measured messages, over both QPs: " + r.rows());
    }

    @Test
    void jsonAndPlotsOfALatencyRun(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("lat.json");
        Path png = dir.resolve("lat.png");
        Path svg = dir.resolve("lat.svg");
        Run r = run("perf", "write-lat", "-d", dev0(), "--peer-dev", dev1(), "-n", "200", "-s", "32", "--json", json.toString(),
                "--plot", png.toString(), "--warmup", "100").ok();
        assertTrue(r.out().contains(" JSON written to " + json), r.out());
        JsonNode j = new ObjectMapper().readTree(json.toFile());
        assertEquals("RDMA_Write_Latency_Test", j.at("/test_info/test").asText());
        assertEquals(dev1(), j.at("/test_info/Device").asText());
        assertEquals(1, j.at("/test_info/GID_index").asInt());
        JsonNode res = j.at("/results/0");
        assertEquals(32, res.get("MsgSize").asInt());
        assertEquals(200, res.get("n_iterations").asInt());
        for (String k : new String[] {"t_min", "t_max", "t_typical", "t_avg", "t_stdev", "percentile_99", "percentile_99.9"}) {
            assertTrue(res.get(k).isNumber(), k);
        }
        assertEquals(199, res.at("/histogram/total_count").asInt(), "every delta is in the histogram");
        long counted = 0;
        for (JsonNode b : res.at("/histogram/buckets")) {
            counted += b.get(1).asLong();
        }
        assertEquals(199, counted);
        // the table row and the JSON agree
        double[] n = numbers(rows(r.out(), PerfReport.LAT_HEADER).get(0));
        assertEquals(n[4], res.get("t_typical").asDouble(), 0.006);
        assertEquals(200, res.at("/udp_baseline/n_iterations").asInt());
        assertEquals(100, j.at("/udp_baseline_warmup_iterations").asInt(), "the floors warm up as the run does");
        double expected = res.get("t_typical").asDouble() / res.at("/udp_baseline/t_typical").asDouble();
        assertEquals(expected, res.at("/udp_baseline/jhca_ratio/t_typical").asDouble(), expected * 1e-3);
        assertEquals(200, res.at("/udp_baseline_with_acks/n_iterations").asInt(), "write-lat has the floor with ACKs");
        assertTrue(res.at("/udp_baseline_with_acks/jhca_ratio/percentile_99.9").isNumber());
        assertEquals(200, res.at("/udp_baseline_with_batched_acks/n_iterations").asInt(),
                "write-lat has the floor with batched ACKs");
        double batched = res.get("t_typical").asDouble() / res.at("/udp_baseline_with_batched_acks/t_typical").asDouble();
        assertEquals(batched, res.at("/udp_baseline_with_batched_acks/jhca_ratio/t_typical").asDouble(), batched * 1e-3);
        assertEquals(100, j.at("/hwlab/warmup_iterations").asInt());
        assertTrue(j.at("/jvm/gc_cycles").isNumber());
        assertEquals("G1", j.at("/jvm/gc").asText());
        assertEquals(Runtime.getRuntime().availableProcessors(), j.at("/machine/cpus").asInt());
        assertEquals(System.getProperty("os.name") + " " + System.getProperty("os.version") + " ("
                + System.getProperty("os.arch") + ")", j.at("/machine/kernel").asText());
        assertTrue(j.at("/machine/hypervisor").isBoolean() && !j.at("/machine/cpu").asText().isEmpty(), j.toString());
        assertTrue(j.at("/machine/null_syscall_ns").asLong() > 0, "getppid timed: " + j.at("/machine"));

        BufferedImage img = ImageIO.read(png.toFile());
        assertEquals(Chart.WIDTH, img.getWidth());
        assertEquals(Chart.HEIGHT, img.getHeight());
        assertTrue(coloured(img) > 200, "the CDF lines are drawn");

        run("perf", "write-lat", "-d", dev0(), "--peer-dev", dev1(), "-n", "20", "--plot", svg.toString(), "--warmup", "0").ok();
        String s = Files.readString(svg);
        assertTrue(s.startsWith("<svg ") && s.contains("<polyline") && s.trim().endsWith("</svg>"), s);
    }

    @Test
    void bandwidthAllSizesJsonAndPlot(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("bw.json");
        Path png = dir.resolve("bw.png");
        BwRow r = bandwidth("write-bw", "-a", "-n", "5", "--json", json.toString(), "--plot", png.toString());
        assertEquals(23, r.rows().size(), r.run().out());
        JsonNode j = new ObjectMapper().readTree(json.toFile());
        assertEquals(23, j.get("results").size());
        assertEquals(1 << 23, j.at("/results/22/MsgSize").asInt());
        assertTrue(j.at("/results/22/BW_average").asDouble() > 0);
        assertTrue(j.at("/results/0/MsgRate").asDouble() > 0);
        assertEquals("MiB/sec", j.at("/results/0/BW_unit").asText());
        assertTrue(coloured(ImageIO.read(png.toFile())) > 200);
    }

    /** The two-process shape (server with --server, client with SERVER), here as two threads of one JVM. */
    @Test
    void writeBwServerAndClient() throws Exception {
        String port = Integer.toString(freePort());
        Run[] r = twoProcesses(new String[] {"perf", "write-bw", "--server", "-d", dev0(), "-p", port, "-s", "8192", "-n", "40"},
                new String[] {"perf", "write-bw", "-d", dev1(), "-p", port, "-s", "8192", "-n", "40", ip0()});
        Run client = r[1].ok();
        Run s = r[0].ok();
        assertTrue(s.out().contains("* Waiting for client to connect... *"), s.out());
        String clientRow = rows(client.out(), PerfReport.BW_HEADER).get(0);
        String serverRow = rows(s.out(), PerfReport.BW_HEADER).get(0);
        assertEquals(clientRow, serverRow, "the server prints the client's report, received over xchg_bw_reports");
        assertTrue(!s.out().contains(" TX depth"), "the server of a BW test prints no TX depth");
    }

    /**
     * A two-process run's server and client, as two threads of this JVM: the client tries again while the server has
     * not bound its port yet. Returns {server, client}, each with its exit code and output.
     */
    static Run[] twoProcesses(String[] serverArgs, String[] clientArgs) throws Exception {
        CompletableFuture<Run> server = CompletableFuture.supplyAsync(() -> run(serverArgs), ThreadPerTask.EXECUTOR);
        Run client = null;
        for (int attempt = 0; attempt < 50; attempt++) {
            client = run(clientArgs);
            if (client.rc() == 0 || !client.err().contains("couldn't connect")) {
                break;
            }
            Thread.sleep(100); // the server thread has not bound its port yet
        }
        return new Run[] {server.get(60, TimeUnit.SECONDS), client};
    }

    /**
     * Two hwlab processes agree on the warm-up in the version exchange: --warmup on one side holds for both, so both
     * print it and run it (the peer's loop would wait forever for iterations the other did not make), and the
     * measured count stays -n; values given on both sides must be equal, or both sides fail naming both.
     */
    @Test
    void twoHwlabProcessesAgreeOnTheWarmUp() throws Exception {
        String port = Integer.toString(freePort());
        Run[] r = twoProcesses(new String[] {"perf", "write-lat", "--server", "-d", dev0(), "-p", port, "-n", "40"},
                new String[] {"perf", "write-lat", "-d", dev1(), "-p", port, "-n", "40", "--warmup", "300", ip0()});
        String banner = " Warm-up         : 300 iterations before the 40 measured (not in the results)";
        for (Run side : r) {
            side.ok();
            assertTrue(side.out().contains(banner), side.out());
            assertTrue(!side.out().contains("No warm-up"), side.out());
            assertEquals(40, (int) numbers(rows(side.out(), PerfReport.LAT_HEADER).get(0))[1], side.out());
        }

        String port2 = Integer.toString(freePort());
        Run[] bad = twoProcesses(new String[] {"perf", "send-lat", "--server", "-d", dev0(), "-p", port2, "--warmup", "5"},
                new String[] {"perf", "send-lat", "-d", dev1(), "-p", port2, "--warmup", "6", ip0()});
        assertEquals(1, bad[0].rc(), bad[0].err());
        assertTrue(bad[0].err().contains("--warmup 5 here and 6 at the peer"), bad[0].err());
        assertEquals(1, bad[1].rc(), bad[1].err());
        assertTrue(bad[1].err().contains("--warmup 6 here and 5 at the peer"), bad[1].err());
    }

    static int coloured(BufferedImage img) {
        int n = 0;
        for (int y = 0; y < img.getHeight(); y += 2) {
            for (int x = 0; x < img.getWidth(); x += 2) {
                int rgb = img.getRGB(x, y) & 0xFFFFFF;
                int r = rgb >> 16;
                int g = (rgb >> 8) & 0xff;
                int b = rgb & 0xff;
                if (Math.max(r, Math.max(g, b)) - Math.min(r, Math.min(g, b)) > 60) {
                    n++;
                }
            }
        }
        return n;
    }
}
