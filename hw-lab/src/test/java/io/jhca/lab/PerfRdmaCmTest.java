package io.jhca.lab;

import io.jhca.testkit.ThreadPerTask;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Verbs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * hwlab perf -R: every test (atomic-lat too) in-process on rxe0/rxe1 (and three on the ConnectX model's pair) with the exchange and the test QPs connected by rdma_cm, and
 * the binary key message perftest sends over its exchange QP.
 */
@Timeout(120)
class PerfRdmaCmTest {
    /** The runs' --json files, deleted with the directory after each test. */
    @TempDir
    Path tmp;

    static final String IP0 = "127.0.73.1";
    static final String IP1 = "127.0.73.2";

    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.rxe(IP0, IP1);

    @Test
    void writeLat() {
        runOverRdmaCm("write-lat");
    }

    @Test
    void sendLat() {
        runOverRdmaCm("send-lat");
    }

    @Test
    void readLat() {
        runOverRdmaCm("read-lat");
    }

    @Test
    void atomicLat() {
        runOverRdmaCm("atomic-lat");
    }

    @Test
    void writeBw() {
        runOverRdmaCm("write-bw");
    }

    @Test
    void sendBw() {
        runOverRdmaCm("send-bw");
    }

    @Test
    void readBw() {
        runOverRdmaCm("read-bw");
    }

    /** The ConnectX model's two functions, both through rdma_cm over their QP1s. */
    @Test
    void theModelPairToo() {
        boolean m0 = false;
        boolean m1 = false;
        for (DeviceInfo d : Verbs.devices()) {
            m0 |= d.name().equals("mlx5_0");
            m1 |= d.name().equals("mlx5_1");
        }
        assumeTrue(m0 && m1, "the ConnectX model (mlx5_0, mlx5_1) is not listed: " + Verbs.devices());
        for (String t : List.of("write-lat", "read-lat", "send-bw")) {
            runOverRdmaCm(t, "mlx5_0", "mlx5_1");
        }
    }

    private void runOverRdmaCm(String test) {
        runOverRdmaCm(test, "rxe0", "rxe1");
    }

    private void runOverRdmaCm(String test, String dev, String peer) {
        boolean bw = test.endsWith("-bw");
        Path json = tmp.resolve(test + "-" + dev + ".json");
        List<String> args = new ArrayList<>(List.of("perf", test, "-R", "-d", dev, "--peer-dev", peer,
                "-n", "200", "--no-udp-baseline", "--json", json.toString()));
        boolean atomic = test.startsWith("atomic");
        if (!atomic) {
            args.addAll(List.of("-s", "64"));
        }
        if (bw) {
            args.addAll(List.of("-q", "2", "--warmup", "200"));   // at the test's size, not the in-process 20000
        } else {
            args.addAll(List.of("--warmup", "100"));
        }
        String out = ToolsEndToEnd.run(args.toArray(new String[0])).ok().out();
        assertTrue(out.contains(" rdma_cm QPs\t : ON\n"), out);
        assertTrue(out.contains(" Data ex. method : rdma_cm\n"), out);
        String info;
        try {
            info = Files.readString(json);
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
        assertTrue(info.contains("\"rdma_cm_QPs\": \"ON\"") && info.contains("\"Data_ex_method\": \"rdma_cm\""),
                "the JSON says what the banner says: " + info);
        Matcher row = Pattern.compile("(?m)^ " + (atomic ? 8 : 64) + " +(\\d+) ").matcher(out);
        assertTrue(row.find(), out);
        assertEquals(bw ? 400 : 200, Integer.parseInt(row.group(1)), out);
        // the remote address lines carry the server's keys, which travelled as binary struct pingpong_dest
        Matcher remote = Pattern.compile("(?m)^ remote address: LID \\S+ QPN 0x([0-9a-f]+)").matcher(out);
        assertTrue(remote.find(), out);
        assertTrue(Integer.parseInt(remote.group(1), 16) > 1, out);
    }

    /**
     * Separate sides with -R warm up in private before rdma_cm connects them (C perftest polls its CPU while it waits
     * for an exchange message over rdma_cm, and sleeps while it waits for a connection): the server before it listens,
     * so its "Waiting for client" comes after the warm-up, the client before it connects. Against sides that offer no
     * warm-up, as C perftest's, nothing more runs; two hwlab sides that both warmed up agree on none after it.
     */
    @Test
    void separateSidesWarmUpBeforeRdmaCmConnectsThem() throws Exception {
        String line = " Warm-up         : " + PerfTestCommand.IN_PROCESS_WARMUP + " iterations in " + PrivateWarmup.RUNS
                + " runs between rxe devices of this process, before the 100 measured (before connecting, as the rdma_cm"
                + " exchange keeps a C peer's CPU busy)";
        String[] out;
        PerftestComm.sendOffers = false;
        try {
            out = warmedBeforeConnecting("c-peers");
        } finally {
            PerftestComm.sendOffers = true;
        }
        for (String o : out) {
            assertTrue(o.contains(line), o);
        }
        assertJson("c-peers", 0, PerfTestCommand.IN_PROCESS_WARMUP);
        out = warmedBeforeConnecting("hwlab-peers");
        for (String o : out) {
            assertTrue(o.contains(line), "two sides that warmed up agree on none after it: " + o);
        }
        assertJson("hwlab-peers", 0, PerfTestCommand.IN_PROCESS_WARMUP);
        // --warmup on the server: it warms up with the client only, and the client, warm already, runs it too
        out = warmedBeforeConnecting("given", "--warmup", "300");
        String agreed = " Warm-up         : 300 iterations before the 100 measured (not in the results)";
        assertTrue(out[0].contains(agreed + "\n") && !out[0].contains("Warming up"), out[0]);
        assertTrue(out[1].contains(agreed + "; before connecting, " + PerfTestCommand.IN_PROCESS_WARMUP + " iterations in "
                + PrivateWarmup.RUNS + " runs between rxe devices of this process\n"), out[1]);
        assertJson("given", 300, 0);
    }

    /**
     * A write-lat -R server on rxe0 (with {@code serverArgs}) and, once it waits, a client on rxe1; checks that each side
     * that warms up says so before it listens or connects, and that both measured -n; returns {server's, client's} output.
     */
    private String[] warmedBeforeConnecting(String name, String... serverArgs) throws Exception {
        String port = Integer.toString(ToolsEndToEnd.freePort());
        java.io.StringWriter serverOut = new java.io.StringWriter(); // a StringBuffer inside: read while written
        List<String> args = new ArrayList<>(List.of("perf", "write-lat", "-R", "--server", "-d", "rxe0", "-p", port, "-n",
                "100", "--json", tmp.resolve(name + ".json").toString()));
        args.addAll(List.of(serverArgs));
        java.io.StringWriter serverErr = new java.io.StringWriter();
        java.util.concurrent.CompletableFuture<Integer> server = java.util.concurrent.CompletableFuture.supplyAsync(
                () -> HwLab.execute(args.toArray(new String[0]), new java.io.PrintWriter(serverOut),
                        new java.io.PrintWriter(serverErr)), ThreadPerTask.EXECUTOR);
        while (serverOut.getBuffer().indexOf("Waiting for client") < 0 && !server.isDone()) {
            Thread.sleep(20);
        }
        ToolsEndToEnd.Run client = ToolsEndToEnd.run("perf", "write-lat", "-R", "-d", "rxe1", "-p", port, "-n", "100", IP0)
                .ok();
        assertEquals(0, server.get(60, java.util.concurrent.TimeUnit.SECONDS), serverErr + "\n" + serverOut);
        String s = serverOut.toString();
        int warming = s.indexOf(" Warming up before listening: " + PrivateWarmup.RUNS + " short runs between rxe devices");
        assertTrue(serverArgs.length > 0 || (warming >= 0 && warming < s.indexOf("* Waiting for client to connect... *")), s);
        assertTrue(client.out().startsWith(" Warming up before connecting: " + PrivateWarmup.RUNS + " short runs"),
                client.out());
        for (String out : List.of(s, client.out())) {
            assertEquals(100, (int) ToolsEndToEnd.numbers(ToolsEndToEnd.rows(out, PerfReport.LAT_HEADER).get(0))[1], out);
        }
        return new String[] {s, client.out()};
    }

    /** The server's JSON of run {@code name}: the warm-up run with the peer and the one before connecting. */
    private void assertJson(String name, int agreed, int privately) throws Exception {
        com.fasterxml.jackson.databind.JsonNode j = new com.fasterxml.jackson.databind.ObjectMapper()
                .readTree(tmp.resolve(name + ".json").toFile());
        assertEquals(agreed, j.at("/hwlab/warmup_iterations").asInt(), name);
        assertEquals(privately, j.at("/hwlab/private_warmup_iterations").asInt(), name);
    }

    @Test
    void keysTravelAsTheBinaryStruct() throws Exception {
        PerftestDest d = new PerftestDest(0x1234, 0x10, 0xABCDEF, 0x123456, 0x89ABCDEF, 0x00007F0011223344L,
                Gid.of(java.net.InetAddress.getByAddress(new byte[] {127, 0, 73, 1})), 0x42);
        byte[] b = d.encodeBinary();
        assertEquals(56, b.length);
        // big-endian fields at perftest's offsets: lid 0, out_reads 4, qpn 8, psn 12, rkey 16, vaddr 24, gid 32, srqn 48
        assertEquals(0x12, b[2]);
        assertEquals(0x34, b[3]);
        assertEquals(0x10, b[7]);
        assertEquals((byte) 0xAB, b[9]);
        assertEquals((byte) 0x56, b[15]);
        assertEquals((byte) 0x89, b[16]);
        assertEquals(0, b[20] | b[21] | b[22] | b[23]);
        assertEquals((byte) 0x7F, b[26]);
        assertEquals((byte) 0x44, b[31]);
        assertEquals((byte) 0xFF, b[42]);
        assertEquals((byte) 127, b[44]);
        assertEquals(0x42, b[51]);
        assertEquals(d, PerftestDest.decodeBinary(b));
        assertThrows(IllegalArgumentException.class, () -> PerftestDest.decodeBinary(new byte[55]));
    }
}
