package io.jhca.lab;

import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.VerbsException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jhca.testkit.ThreadPerTask;

/**
 * hwlab perf send-bw --mcg (perftest's multicast mode): the server's UD QP attached to the group, the client
 * sending to it with QPN 0xFFFFFF, in-process on rxe0/rxe1 and on the ConnectX model's pair, and as two runs whose
 * server reports the receive completions it counted; -M in perftest's form and the refusals.
 */
@Timeout(120)
class PerfMcgTest {
    static final String IP0 = "127.0.74.1";
    static final String IP1 = "127.0.74.2";
    /** ::ffff:239.74.0.1 in perftest's -M form. */
    static final String MGID = "0:0:0:0:0:0:0:0:0:0:255:255:239:74:0:1";
    static final String MGID_LINE = " MGID: 00:00:00:00:00:00:00:00:00:00:255:255:239:74:00:01";

    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.rxe(IP0, IP1);

    @Test
    void inProcessOnTheRxePair(@TempDir Path dir) throws Exception {
        Path json = dir.resolve("mcg.json");
        String out = inProcess("rxe0", "rxe1", "-s", "512", "--json", json.toString());
        assertEquals(List.of(512), sizes(out, 200), out);
        // perftest's JSON names the mode the same way (write_test_info_to_file)
        JsonNode info = new ObjectMapper().readTree(json.toFile()).get("test_info");
        assertEquals("Send_BW_Multicast_Test", info.get("test").asText(), info.toString());
        assertEquals("on_UD", info.get("MultiCast_runs").asText(), info.toString());
        assertEquals("UD", info.get("Connection_type").asText(), info.toString());
    }

    @Test
    void inProcessOnTheModelPair() {
        boolean m0 = false;
        boolean m1 = false;
        for (DeviceInfo d : Verbs.devices()) {
            m0 |= d.name().equals("mlx5_0");
            m1 |= d.name().equals("mlx5_1");
        }
        assumeTrue(m0 && m1, "the ConnectX model (mlx5_0, mlx5_1) is not listed: " + Verbs.devices());
        String out = inProcess("mlx5_0", "mlx5_1", "-s", "1024");
        assertEquals(List.of(1024), sizes(out, 200), out);
    }

    /** A UD message is at most one MTU: larger sizes become the MTU, and -a runs 2 .. MTU. */
    @Test
    void sizesStopAtTheMtu() {
        String big = inProcess("rxe0", "rxe1", "-s", "65536", "-m", "1024");
        assertEquals(List.of(1024), sizes(big, 200), big);
        String all = inProcess("rxe0", "rxe1", "-a", "-m", "512");
        assertEquals(List.of(2, 4, 8, 16, 32, 64, 128, 256, 512), sizes(all, 200), all);
    }

    /** Two runs: the server's QP, attached to the group, counts every message as a receive completion. */
    @Test
    void serverCountsTheGroupsMessages() throws Exception {
        int port = ToolsEndToEnd.freePort();
        List<String> common = List.of("--mcg", "-M", MGID, "-n", "300", "-s", "256", "-p", Integer.toString(port));
        CompletableFuture<ToolsEndToEnd.Run> server = CompletableFuture.supplyAsync(() -> ToolsEndToEnd.run(
                args(common, "perf", "send-bw", "--server", "-d", "rxe0")), ThreadPerTask.EXECUTOR);
        ToolsEndToEnd.Run client = null;
        for (int attempt = 0; attempt < 50; attempt++) {
            client = ToolsEndToEnd.run(args(common, "perf", "send-bw", "-d", "rxe1", IP0));
            if (client.rc() == 0 || !client.err().contains("couldn't connect")) {
                break;
            }
            Thread.sleep(100); // the server thread has not bound its port yet
        }
        client.ok();
        ToolsEndToEnd.Run s = server.get(60, TimeUnit.SECONDS).ok();
        // the server advertises the group and QPN 0xFFFFFF as its own address, and labels its GID line MGID
        assertTrue(s.out().contains(" local address: LID 0000 QPN 0xffffff "), s.out());
        assertTrue(s.out().contains(MGID_LINE + "\n"), s.out());
        assertTrue(s.out().contains(" RX depth        : 300\n"), s.out()); // rx depth 512 capped at -n
        assertEquals(List.of(256), sizes(s.out(), 300), s.out());
        assertTrue(client.out().contains(" remote address: LID 0000 QPN 0xffffff "), client.out());
        assertTrue(client.out().contains(MGID_LINE + "\n"), client.out());
        assertEquals(List.of(256), sizes(client.out(), 300), client.out());
    }

    @Test
    void refusals() {
        assertUsage("--mcg: hwlab runs the multicast mode in send-bw", "perf", "send-lat", "--mcg", "-M", MGID);
        assertUsage("Multicast with rdma_cm", "perf", "send-bw", "--mcg", "-M", MGID, "-R");
        assertUsage("Only 1 QP supported in multicast", "perf", "send-bw", "--mcg", "-M", MGID, "-q", "2");
        assertUsage("-M/--MGID needs --mcg", "perf", "send-bw", "-M", MGID);
        assertUsage("UD only in multicast mode", "perf", "send-bw", "-c", "UD");
        assertUsage("-c RC contradicts it", "perf", "send-bw", "--mcg", "-c", "RC");
        assertUsage("is not a multicast GID", "perf", "send-bw", "--mcg", "-M", "0:0:0:0:0:0:0:0:0:0:255:255:10:0:0:1");
        assertUsage("'1:2:3' is neither 16 ':'-separated byte values", "perf", "send-bw", "--mcg", "-M", "1:2:3");
        assertUsage("byte 15 ('256') is not 0..255", "perf", "send-bw", "--mcg", "-M", "255:0:0:0:0:0:0:0:0:0:0:0:0:0:0:256");
        // perftest's default group is IPv6, the default GID of rxe0 IPv4-mapped: refused, naming -M
        ToolsEndToEnd.Run r = ToolsEndToEnd.run("perf", "send-bw", "--mcg", "-n", "20", "--no-udp-baseline");
        assertTrue(r.rc() != 0, r.out());
        assertTrue(r.err().contains("ff01:0:2:c985:: (perftest's default MGID)") && r.err().contains("give -M"), r.err());
    }

    @Test
    void mgidInPerftestsFormAndAsAnAddress() throws Exception {
        assertArrayEquals(new byte[] {(byte) 0xff, 0x0e, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x12, 0x34},
                PerfMcast.parse("0xff:14:0:0:0:0:0:0:0:0:0:0:0:0:022:0x34").bytes()); // hex, decimal, octal as strtoll
        assertEquals(Gid.of(InetAddress.getByName("ff0e::1")), PerfMcast.parse("ff0e::1"));
        assertEquals(Gid.of(InetAddress.getByName("239.1.2.3")), PerfMcast.parse("239.1.2.3"));
        assertEquals(PerfMcast.parse("0:0:0:0:0:0:0:0:0:0:255:255:239:1:2:3"), PerfMcast.parse("239.1.2.3"));
        // perftest's MCG_GID, the client's with its last byte incremented
        assertEquals(Gid.of(InetAddress.getByName("ff01:0:2:c985::")), PerfMcast.mgid(null, false));
        assertEquals(Gid.of(InetAddress.getByName("ff01:0:2:c985::1")), PerfMcast.mgid(null, true));
        assertThrows(VerbsException.class, () -> PerfMcast.parse("0:0:0:0:0:0:0:0:0:0:0:0:0:0:0")); // 15 fields: an address? no
        assertThrows(VerbsException.class, () -> PerfMcast.parse("0:0:0:0:0:0:0:0:0:0:0:0:0:0:0:09"));
        assertThrows(VerbsException.class, () -> PerfMcast.parse("group.example"));
        assertThrows(VerbsException.class, () -> PerfMcast.parse("239.0.0.256"));
        assertFalse(PerfMcast.isMulticast(Gid.of(InetAddress.getByName("223.255.255.255"))));
        assertTrue(PerfMcast.isMulticast(Gid.of(InetAddress.getByName("224.0.0.0"))));
        assertFalse(PerfMcast.isMulticast(Gid.of(InetAddress.getByName("fe80::1"))));
    }

    private static String inProcess(String dev, String peer, String... extra) {
        List<String> a = new ArrayList<>(List.of("perf", "send-bw", "--mcg", "-M", MGID, "-d", dev, "--peer-dev", peer,
                "-n", "200", "--no-udp-baseline"));
        a.addAll(List.of(extra));
        String out = ToolsEndToEnd.run(a.toArray(new String[0])).ok().out();
        assertTrue(out.contains("                    Send BW Multicast Test\n MultiCast runs on UD!\n"), out);
        assertTrue(out.contains(" Connection type : UD\t"), out);
        assertTrue(out.contains(" remote address: LID 0000 QPN 0xffffff "), out);
        assertTrue(out.contains(MGID_LINE + "\n"), out);
        return out;
    }

    /** The sizes of the BW table's rows, each of which must count {@code iters} messages. */
    private static List<Integer> sizes(String out, int iters) {
        List<Integer> s = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^ (\\d+) +(\\d+) +[0-9.]+ +[0-9.]+").matcher(out);
        while (m.find()) {
            assertEquals(iters, Integer.parseInt(m.group(2)), m.group());
            s.add(Integer.parseInt(m.group(1)));
        }
        return s;
    }

    private static String[] args(List<String> common, String... head) {
        List<String> a = new ArrayList<>(List.of(head));
        a.addAll(common);
        return a.toArray(new String[0]);
    }

    private static void assertUsage(String text, String... args) {
        ToolsEndToEnd.Run r = ToolsEndToEnd.run(args);
        assertTrue(r.rc() != 0, "accepted: " + String.join(" ", args));
        assertTrue(r.err().contains(text), "expected '" + text + "' in:\n" + r.err());
    }
}
