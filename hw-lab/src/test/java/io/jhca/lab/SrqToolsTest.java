package io.jhca.lab;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jhca.testkit.ThreadPerTask;
import io.jhca.verbs.Gid;

/**
 * The SRQ tools on two rxe devices (moved to 127.0.72.1/.2 so no other test or process collides): srq-pingpong with
 * several QPs on one SRQ, server through the API and client through the command line, and perf's --use_srq.
 */
class SrqToolsTest {
    static final String IP0 = "127.0.72.1";
    static final String IP1 = "127.0.72.2";

    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.rxe(IP0, IP1);

    @Test
    void srqPingpongOverFourQps() throws Exception {
        int qps = 4;
        int iters = 200;
        StringWriter serverOut = new StringWriter();
        CompletableFuture<Integer> port = new CompletableFuture<>();
        CompletableFuture<RcPingpong.Result> server = CompletableFuture.supplyAsync(() -> {
            try {
                return new SrqPingpong(new SrqPingpong.Options("rxe0", 1, null, 4096, iters, 1024, qps, 100, 0, 0, null,
                        null, 30000), new PrintWriter(serverOut, true)).onListening(port::complete).run();
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, ThreadPerTask.EXECUTOR);
        server.whenComplete((r, t) -> {
            if (t != null) {
                port.completeExceptionally(t);
            }
        });
        int p = port.get(30, TimeUnit.SECONDS);
        ToolsEndToEnd.Run client = ToolsEndToEnd.run("srq-pingpong", "-d", "rxe1", "-q", Integer.toString(qps), "-r", "100",
                "-n", Integer.toString(iters), "-p", Integer.toString(p), IP0).ok();
        RcPingpong.Result sr = server.get(60, TimeUnit.SECONDS);
        assertEquals(4096L * iters * 2, sr.bytes());

        List<String[]> c = addresses(client.out());
        List<String[]> s = addresses(serverOut.toString());
        assertEquals(2 * qps, c.size(), client.out());
        assertEquals(2 * qps, s.size(), serverOut.toString());
        for (int i = 0; i < qps; i++) {
            assertEquals("local", c.get(i)[0]);
            assertEquals("remote", c.get(qps + i)[0]);
            assertEquals("::ffff:" + IP1, c.get(i)[3]);
            assertEquals("::ffff:" + IP0, c.get(qps + i)[3]);
            // QP i of each side is the peer of QP i of the other: QPN, PSN and GID crossed the wire in order
            assertEquals(String.join(" ", c.get(i)[1], c.get(i)[2], c.get(i)[3]),
                    String.join(" ", s.get(qps + i)[1], s.get(qps + i)[2], s.get(qps + i)[3]));
            assertEquals(String.join(" ", s.get(i)[1], s.get(i)[2], s.get(i)[3]),
                    String.join(" ", c.get(qps + i)[1], c.get(qps + i)[2], c.get(qps + i)[3]));
        }
        Matcher bytes = Pattern.compile("(?m)^(\\d+) bytes in (\\d+\\.\\d\\d) seconds = (\\d+\\.\\d\\d) Mbit/sec$")
                .matcher(client.out());
        assertTrue(bytes.find(), client.out());
        assertEquals(4096L * iters * 2, Long.parseLong(bytes.group(1)));
        assertTrue(Pattern.compile("(?m)^" + iters + " iters in \\d+\\.\\d\\d seconds = \\d+\\.\\d\\d usec/iter$")
                .matcher(client.out()).find(), client.out());
    }

    /**
     * An srq-pingpong server against clients that are not ibv_srq_pingpong (which sends MAX_QP addresses, the first
     * one's GID for all): an all-zero GID, an answer other than "done", and silence, each ending the server with its
     * reason, the silence after the stall timeout (500 ms here).
     */
    @Test
    void srqPingpongServerEndsOnAClientThatIsNotOne() throws Exception {
        ToolsEndToEnd.RawClient zeroGid = (in, out) -> addresses(out, Gid.ZERO);
        ToolsEndToEnd.RawClient notDone = (in, out) -> {
            addresses(out, Gid.of(InetAddress.getByName(IP1)));
            in.readNBytes(PingpongDest.SIZE * SrqPingpong.MAX_QP);
            out.write("nope\0".getBytes(StandardCharsets.US_ASCII));
        };
        ToolsEndToEnd.RawClient silent = (in, out) -> { };
        ToolsEndToEnd.assertServerEndsOnEach(onListening -> new SrqPingpong(new SrqPingpong.Options("rxe0", 1, null,
                4096, 10, 1024, 4, 100, 0, 0, null, null, 500), new PrintWriter(new StringWriter(), true))
                .onListening(onListening).run(), IP0, new Object[][] {{zeroGid, "all-zero GID"},
                    {notDone, "expected \"done\""}, {silent, "timed out waiting for the peer"}});
    }

    /** MAX_QP addresses as srq_pingpong's client writes them, the first with {@code gid}. */
    private static void addresses(OutputStream out, Gid gid) throws IOException {
        for (int i = 0; i < SrqPingpong.MAX_QP; i++) {
            out.write(new PingpongDest(0, 0x11 + i, 0x22, i == 0 ? gid : Gid.ZERO).encode());
        }
    }

    @Test
    void srqPingpongRefusesTooFewReceives() {
        ToolsEndToEnd.Run r = ToolsEndToEnd.run("srq-pingpong", "-q", "8", "-r", "4");
        assertEquals(HwLab.EXIT_USAGE, r.rc(), r.err());
        assertTrue(r.err().contains("rx_depth 4 is too small for 8 QPs"), r.err());
    }

    @Test
    void perfSendTestsUseAnSrq(@TempDir Path tmp) throws Exception {
        Path json = tmp.resolve("srq-perf.json");
        for (String test : List.of("send-lat", "send-bw")) {
            // perftest spells it --use-srq; --use_srq is taken too
            List<String> args = new ArrayList<>(List.of("perf", test, "-d", "rxe0", "--peer-dev", "rxe1",
                    test.equals("send-bw") ? "--use-srq" : "--use_srq",
                    "-n", "200", "-s", "64", "--json", json.toString(),
                    // the warm-up at the test's size, as ToolsEndToEnd's runs: the in-process default (20000) is a
                    // hundred times the measured work, over a minute on two cores another job keeps busy
                    "--warmup", "200"));
            if (test.equals("send-bw")) {
                args.addAll(List.of("-q", "2"));
            } else {
                args.add("--no-udp-baseline");
            }
            String out = ToolsEndToEnd.run(args.toArray(new String[0])).ok().out();
            assertTrue(out.contains(" Connection type : RC\t\tUsing SRQ      : ON\n"), out);
            Matcher row = Pattern.compile("(?m)^ 64 +(\\d+) ").matcher(out);
            assertTrue(row.find(), out);
            assertEquals(test.equals("send-bw") ? 400 : 200, Integer.parseInt(row.group(1)), out);
            String info = Files.readString(json);
            assertTrue(info.contains("\"Using_SRQ\": \"ON\""), "the JSON says what the banner says: " + info);
        }
        ToolsEndToEnd.Run refused = ToolsEndToEnd.run("perf", "write-lat", "--use-srq");
        assertEquals(HwLab.EXIT_USAGE, refused.rc(), refused.err());
        assertTrue(refused.err().contains("--use-srq is for SEND tests only"), refused.err());
    }

    @Test
    void devinfoShowsTheSrqLimits() {
        String out = ToolsEndToEnd.run("devinfo", "-d", "rxe0", "-v").ok().out();
        // rxe_param.h: RXE_MAX_SRQ = 2^20 - 0x20001, RXE_MAX_SRQ_WR = 2^20, RXE_MAX_SRQ_SGE = 27
        assertTrue(out.contains("\tmax_ah:\t\t\t\t1048576\n\tmax_srq:\t\t\t917503\n\tmax_srq_wr:\t\t\t1048576\n"
                + "\tmax_srq_sge:\t\t\t27\n\tmax_pkeys:"), out);
    }

    /** The rc_pingpong-style address lines: side, QPN, PSN, GID. */
    private static List<String[]> addresses(String out) {
        List<String[]> l = new ArrayList<>();
        Matcher m = ToolsEndToEnd.ADDR.matcher(out);
        while (m.find()) {
            l.add(new String[] {m.group(1), m.group(3), m.group(4), m.group(5)});
        }
        return l;
    }
}
