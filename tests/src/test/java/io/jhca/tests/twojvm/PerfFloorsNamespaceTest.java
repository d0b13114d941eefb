package io.jhca.tests.twojvm;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code hwlab perf} between two hosts, with no option but the server's address (and 4 KiB messages for the bandwidth
 * runs): two network namespaces this test creates (jhca-floor-a, jhca-floor-b) joined by a veth pair, 10.78.0.1/24 and
 * 10.78.0.2/24 (and fd78::1/64, fd78::2/64), an rxe device on each interface, the server in B and the client in A.
 * Neither process can bind the other's address, so the client's UDP floors run with their other end in the server's
 * process: write-lat prints its three floors with jhca's multiples of them (the JSON says where the other end ran),
 * write-bw its stream floor from client to server, read-bw the stream the other way (a READ's data comes from the
 * server), send-lat its floors over IPv6 (fd78::1 and fd78::2, GID index 2), and the server says how many of the
 * client's measurements it answered. Needs root and iproute2; skipped with the reason otherwise. Everything it creates
 * is deleted afterwards.
 */
class PerfFloorsNamespaceTest {
    private static final String NS_A = "jhca-floor-a";
    private static final String NS_B = "jhca-floor-b";
    private static final String IF_A = "jfa";
    private static final String IF_B = "jfb";
    private VethPair net;

    @BeforeEach
    void createNamespaces() throws Exception {
        net = VethPair.create("PerfFloorsNamespaceTest", NS_A, IF_A, NS_B, IF_B);
        VethPair.up(NS_A, IF_A, "10.78.0.1/24", "fd78::1/64");
        VethPair.up(NS_B, IF_B, "10.78.0.2/24", "fd78::2/64");
    }

    @AfterEach
    void deleteNamespaces() throws Exception {
        if (net != null) {
            net.close();
        }
    }

    @Test
    @Timeout(value = 240, unit = TimeUnit.SECONDS) // safety net only
    void twoHostsGetEveryFloorWithTheServersProcessAsTheOtherEnd(@TempDir Path dir) throws Exception {
        String[] tests = {"write-lat", "write-bw", "read-bw", "send-lat"};
        List<List<String>> server = new ArrayList<>();
        List<List<String>> client = new ArrayList<>();
        server.add(List.of("link", "add", "rxe9", "netdev", IF_B));
        client.add(List.of("link", "add", "rxe9", "netdev", IF_A));
        Path json = dir.resolve("write-lat.json");
        for (String t : tests) {
            Path ready = dir.resolve(t + "-listening");
            // send-lat over IPv6: GID index 2 on both sides (the interface's fd78:: address)
            boolean v6 = t.equals("send-lat");
            List<String> srv = new ArrayList<>(List.of("flag-on-listen", ready.toString(), "perf", t, "-d", "rxe9"));
            List<String> size = sizeArgs(t);
            srv.addAll(size);
            srv.addAll(v6 ? List.of("-x", "2", "--server") : List.of("--server"));
            server.add(srv);
            client.add(List.of("await", ready.toString()));
            List<String> c = new ArrayList<>(List.of("perf", t, "-d", "rxe9"));
            c.addAll(size);
            c.addAll(v6 ? List.of("-x", "2", "fd78::2") : List.of("10.78.0.2"));
            if (t.equals("write-lat")) {
                c.addAll(List.of("--json", json.toString()));
            }
            client.add(c);
        }
        Process b = HwLabSteps.start(NS_B, dir.resolve("b-links"), dir.resolve("b.log"), server);
        Process a = HwLabSteps.start(NS_A, dir.resolve("a-links"), dir.resolve("a.log"), client);
        TwoSides end = TwoSides.await(dir, a, 200, b, 20);
        String logA = end.logA();
        String logB = end.logB();
        String both = end.labelled("client (A)", "server (B)");
        assertTrue(end.done(), "the sides did not finish\n" + both);
        for (String t : tests) {
            boolean v6 = t.equals("send-lat");
            String size = sizeArgs(t).stream().map(arg -> arg + " ").collect(Collectors.joining());
            String address = v6 ? "-x 2 fd78::2" : "10.78.0.2";
            assertTrue(logA.contains("== exit 0: perf " + t + " -d rxe9 " + size + address), t + "\n" + both);
            assertTrue(logB.contains("== exit 0: perf " + t + " -d rxe9 " + size + (v6 ? "-x 2 " : "") + "--server"),
                    t + "\n" + both);
        }
        assertFalse(logA.contains("not measured"), "every floor was measured\n" + both);

        String lat = section(logA, "perf write-lat");
        assertTrue(lat.contains(" UDP floor: the same ping-pong over plain UDP DatagramChannels 10.78.0.1 <-> 10.78.0.2"
                + " (no RDMA; the echo in the server's process):"), lat);
        assertEquals(3, HwLabSteps.count(lat, "jhca / floor: t_typical"), "plain, with ACKs, with batched ACKs\n" + lat);
        assertEquals(3, answered(section(logB, "perf write-lat")), both);
        String js = Files.readString(json);
        assertTrue(js.contains("\"udp_baseline_other_end\": \"server process\""), js);
        for (String key : new String[] {"udp_baseline", "udp_baseline_with_acks", "udp_baseline_with_batched_acks"}) {
            assertTrue(js.contains("\"" + key + "\""), key + "\n" + js);
        }

        String wbw = section(logA, "perf write-bw");
        assertTrue(wbw.contains("over plain UDP DatagramChannels 10.78.0.1 -> 10.78.0.2"), wbw);
        assertTrue(wbw.contains("the server's end in its process"), wbw);
        assertTrue(answered(section(logB, "perf write-bw")) >= 2, "its warm-up streams and the measured one\n" + both);
        String rbw = section(logA, "perf read-bw");
        assertTrue(rbw.contains("over plain UDP DatagramChannels 10.78.0.2 -> 10.78.0.1"), "READ data flows to the"
                + " client\n" + rbw);
        assertTrue(answered(section(logB, "perf read-bw")) >= 2, both);
        String v6 = section(logA, "perf send-lat");
        assertTrue(v6.contains(" UDP floor: the same ping-pong over plain UDP DatagramChannels fd78:0:0:0:0:0:0:1 <->"
                + " fd78:0:0:0:0:0:0:2 (no RDMA; the echo in the server's process):"), v6);
        assertEquals(3, HwLabSteps.count(v6, "jhca / floor: t_typical"), v6);
        assertEquals(3, answered(section(logB, "perf send-lat")), both);
    }

    /**
     * The size option of {@code test}'s runs: the bandwidth runs move 4 KiB messages, not the default 64 KiB. At 64
     * KiB each took 16-23 s of this test (20000 warm-up messages, then the floor's stream); where the floors run and
     * which way their stream flows, what this test is about, do not depend on the size (the interop test runs the
     * default).
     */
    private static List<String> sizeArgs(String test) {
        return test.endsWith("-bw") ? List.of("-s", "4096") : List.of();
    }

    /** The log of the step that ran {@code command}: from the end line of the step before to its own. */
    private static String section(String log, String command) {
        int from = 0;
        for (int i = log.indexOf("== exit "); i >= 0; i = log.indexOf("== exit ", i + 1)) {
            int eol = log.indexOf('\n', i);
            eol = eol < 0 ? log.length() : eol;
            if (log.substring(i, eol).contains(": " + command + " ")) {
                return log.substring(from, i);
            }
            from = Math.min(eol + 1, log.length());
        }
        throw new AssertionError("no step '" + command + "' in\n" + log);
    }

    /** N of the server's "answered N of the client's measurements" line (0 without one). */
    private static int answered(String log) {
        Matcher m = Pattern.compile("UDP floors: answered (\\d+) of the client's measurements").matcher(log);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }
}
