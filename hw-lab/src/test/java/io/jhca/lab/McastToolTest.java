package io.jhca.lab;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jhca.testkit.ThreadPerTask;

/**
 * {@code hwlab mcast}: a publisher on rxe0 and a subscriber with two QPs on rxe1 (in this JVM, on 127.0.72.1/.2 so
 * no other test's devices are in the way). The subscriber counts every message from its sequence number and the
 * publisher's last message names the total, so received + lost adds up to exactly what was sent; at a modest rate on
 * the loopback nothing is lost. Usage errors name the problem.
 */
class McastToolTest {

    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.rxe("127.0.72.1", "127.0.72.2");

    @Test
    void everyReceiverCountsTheWholeFeed() throws Exception {
        StringWriter recvOut = new StringWriter();
        StringWriter recvErr = new StringWriter();
        CompletableFuture<Integer> recv = CompletableFuture.supplyAsync(() -> HwLab.execute(new String[] {"mcast",
                "recv", "-d", "rxe1", "--mcg", "239.72.0.1", "--qps", "2", "--idle", "10", "--wait", "30"},
                new PrintWriter(recvOut, true), new PrintWriter(recvErr, true)), ThreadPerTask.EXECUTOR);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!recvOut.toString().contains("attached to 239.72.0.1")) {
            assertTrue(System.nanoTime() < deadline && !recv.isDone(), "the subscriber did not attach: " + recvOut + recvErr);
            Thread.sleep(10);
        }
        StringWriter sendOut = new StringWriter();
        StringWriter sendErr = new StringWriter();
        int rc = HwLab.execute(new String[] {"mcast", "send", "-d", "rxe0", "--mcg", "239.72.0.1", "-n", "300", "-s",
                "100", "--rate", "3000"}, new PrintWriter(sendOut, true), new PrintWriter(sendErr, true));
        assertEquals(0, rc, sendOut + "\n" + sendErr);
        assertTrue(sendOut.toString().contains("sent 300 messages in "), sendOut.toString());
        assertEquals(0, (int) recv.get(60, TimeUnit.SECONDS), recvOut + "\n" + recvErr);
        String out = recvOut.toString();
        Matcher m = Pattern.compile("QP 0x([0-9a-f]{6}) received (\\d+) of (\\d+), lost (\\d+) ").matcher(out);
        int receivers = 0;
        while (m.find()) {
            receivers++;
            assertEquals("300", m.group(3), "the publisher's last message names the total: " + out);
            assertEquals(300, Long.parseLong(m.group(2)) + Long.parseLong(m.group(4)), "received + lost: " + out);
            assertEquals("300", m.group(2), "nothing lost at 3000/s on the loopback: " + out);
        }
        assertEquals(2, receivers, "one line per receiver QP: " + out);
        assertTrue(out.contains("Mpps") && out.contains("MB/s"), out);
    }

    @Test
    void aUnicastGroupIsRefused() {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int rc = HwLab.execute(new String[] {"mcast", "send", "-d", "rxe0", "--mcg", "10.0.0.1"},
                new PrintWriter(out, true), new PrintWriter(err, true));
        assertEquals(HwLab.EXIT_FAILURE, rc);
        assertTrue(err.toString().contains("--mcg 10.0.0.1 is not a multicast group"), err.toString());
    }
}
