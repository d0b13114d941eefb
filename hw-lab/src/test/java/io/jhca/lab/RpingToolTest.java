package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.RegisterExtension;

import io.jhca.testkit.ThreadPerTask;

/**
 * hwlab rping in both roles in one JVM (rxe0 serves, rxe1 connects, each driven by its own thread): every ping read by
 * the server and written back, the client's -V check passing, and the server ending on the client's disconnect, which
 * it must answer with a DREP before its connection manager closes (the client waits for it).
 */
class RpingToolTest {
    static final String IP0 = "127.0.74.1";
    static final String IP1 = "127.0.74.2";
    static final int PINGS = 10;

    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.rxe(IP0, IP1);

    /**
     * With caller progress, as ./hwlab runs it: the connection manager's DREP to the client's DREQ leaves only if
     * closing the device's CM sends what it posted. Without an ACK hold (0) and with the default one (4000 ns, each
     * side's ACK leaving with its answer, just before it): rping must take its completions in any order, as Linux rxe
     * may complete a SEND after the receive of the peer's next message.
     */
    @ParameterizedTest(name = "ack hold {0} ns")
    @ValueSource(strings = {"0", "4000"})
    void clientPingsServerOverRdmaCmAndBothEnd(String ackHold) throws Exception {
        Map<String, String> saved = new HashMap<>();
        Map<String, String> set = Map.of("jhca.rxe.progress", "caller", "jhca.rxe.ackhold", ackHold);
        set.forEach((k, v) -> {
            saved.put(k, System.getProperty(k));
            System.setProperty(k, v);
        });
        try {
            pingPong();
        } finally {
            saved.forEach((k, v) -> {
                if (v == null) {
                    System.clearProperty(k);
                } else {
                    System.setProperty(k, v);
                }
            });
        }
    }

    private void pingPong() throws Exception {
        String port = Integer.toString(ToolsEndToEnd.freePort());
        // rping serves one connection: the client may start only once the server listens (-d says so), or its REQ
        // would reach no listener and a retried one could become the connection the server then waits on
        StringWriter serverOut = new StringWriter();
        StringWriter serverErr = new StringWriter();
        CompletableFuture<Integer> server = CompletableFuture.supplyAsync(() -> HwLab.execute(
                new String[] {"rping", "-s", "-a", IP0, "-p", port, "-v", "-d"}, new PrintWriter(serverOut, true),
                new PrintWriter(serverErr, true)), ThreadPerTask.EXECUTOR);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!serverOut.toString().contains("listening on " + IP0 + ":" + port) && !server.isDone()
                && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(serverOut.toString().contains("listening on"), "server: " + serverOut + serverErr);
        ToolsEndToEnd.Run client = ToolsEndToEnd.run("rping", "-c", "-a", IP0, "-I", IP1, "-p", port, "-C",
                Integer.toString(PINGS), "-v", "-V", "--stall-timeout", "20").ok();
        assertEquals(0, server.get(60, TimeUnit.SECONDS), "server exit code: " + serverOut + serverErr);
        ToolsEndToEnd.Run s = new ToolsEndToEnd.Run(0, serverOut.toString(), serverErr.toString());

        assertEquals(PINGS, count(client.out(), "(?m)^ping data: rdma-ping-\\d+: [A-Za-z\\[\\\\\\]^_`]+$"), client.out());
        assertTrue(client.out().contains("ping data: rdma-ping-0: ABCDEFGHIJ"), client.out());
        assertTrue(client.out().contains("ping data: rdma-ping-" + (PINGS - 1) + ": JKLMNOPQRS"), client.out());
        assertEquals(PINGS, count(s.out(), "(?m)^server ping data: rdma-ping-\\d+: "), s.out());
        assertTrue(!client.out().contains("data mismatch"), client.out());
    }

    private static int count(String text, String regex) {
        Matcher m = Pattern.compile(regex).matcher(text);
        int n = 0;
        while (m.find()) {
            n++;
        }
        return n;
    }
}
