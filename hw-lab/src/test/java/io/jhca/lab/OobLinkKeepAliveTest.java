package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The exchange connection fails, instead of waiting for ever, when the peer's host goes away without closing it:
 * a peer in a network namespace of this test's, reached over a veth pair, whose end is then taken down, so nothing
 * it sent or would send arrives (no FIN, no RST). The links use a short keepalive (1 s, then 2 probes 1 s apart), so
 * the bound is about 3 s where the default is about 25. As root; skipped with the reason otherwise.
 */
@Timeout(60)
class OobLinkKeepAliveTest {
    static final String NS = "jhca-oob-ka";
    static final String HOST_END = "jhcaka0";
    static final String PEER_END = "jhcaka1";
    static final String HOST_IP = "10.203.77.1";
    static final String PEER_IP = "10.203.77.2";
    static final int PORT = 18515;

    private Process peer;
    private OobLink link;

    @BeforeEach
    void peerInItsNamespace() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root: it creates a network namespace");
        assumeTrue(sh("ip", "-V") == 0, "needs iproute2 ('ip')");
        removePair(); // left by a killed run
        must("ip", "netns", "add", NS);
        must("ip", "link", "add", HOST_END, "type", "veth", "peer", "name", PEER_END, "netns", NS);
        must("ip", "addr", "add", HOST_IP + "/30", "dev", HOST_END);
        must("ip", "link", "set", HOST_END, "up");
        must("ip", "-n", NS, "addr", "add", PEER_IP + "/30", "dev", PEER_END);
        must("ip", "-n", NS, "link", "set", PEER_END, "up");
        must("ip", "-n", NS, "link", "set", "lo", "up");
        // a socket keeps the namespace it was made in, so the peer is a process there; the kernel completes the
        // handshake, acknowledges data and answers keepalive probes for a connection nobody accepted, so a listener
        // that never accepts is peer enough
        peer = new ProcessBuilder("ip", "netns", "exec", NS, "python3", "-c",
                "import socket,time\n"
                        + "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                        + "s.bind(('" + PEER_IP + "', " + PORT + ")); s.listen(1); print('up', flush=True); time.sleep(120)\n")
                .redirectErrorStream(true).start();
        assertEquals("up", new String(peer.getInputStream().readNBytes(2)), "the peer did not start");
        link = OobLink.connect(PEER_IP, PORT, 5000).keepAlive(1, 1, 2);
    }

    @AfterEach
    void removeNamespace() throws Exception {
        if (link != null) {
            link.close();
        }
        if (peer != null) {
            peer.destroyForcibly();
            peer.waitFor();
        }
        removePair();
    }

    /**
     * Deletes the pair by its end here, then the namespace. Deleting the namespace alone removes the pair only when the
     * kernel's cleanup of the namespace runs, later: the next test's "ip link add" then found the old end still here.
     */
    private static void removePair() throws Exception {
        sh("ip", "link", "del", HOST_END);
        sh("ip", "netns", "del", NS);
    }

    @Test
    void aSilentReadFailsWithinTheKeepaliveBoundOnceThePeersHostIsGone() throws Exception {
        // while the peer's host is there, its kernel answers the probes: the connection holds past their bound
        long quiet = System.nanoTime();
        link.readTimeout(4000);
        IOException none = assertThrows(IOException.class, () -> link.read(1));
        assertTrue(none.getMessage().contains("timed out waiting for the peer"),
                "a live peer's silence ends by the read timeout, not the keepalive: " + none.getMessage());
        assertTrue(System.nanoTime() - quiet >= TimeUnit.SECONDS.toNanos(4));
        link.readTimeout(0);
        must("ip", "-n", NS, "link", "set", PEER_END, "down"); // the host is gone: nothing answers
        assertGoneWithinBound();
    }

    /**
     * Keepalive sends no probe while bytes of ours are unacknowledged; TCP's retransmissions alone would take about 15
     * minutes to give up. TCP_USER_TIMEOUT bounds that wait as keepalive bounds a silent one.
     */
    @Test
    void aReadAfterAnUnacknowledgedWriteFailsWithinTheSameBound() throws Exception {
        link.write(new byte[] {'s', 'y', 'n', 'c'}); // the peer's kernel acknowledges it: the host is there
        must("ip", "-n", NS, "link", "set", PEER_END, "down");
        link.write(new byte[] {'d', 'o', 'n', 'e', 0}); // in flight for good
        assertGoneWithinBound();
    }

    private void assertGoneWithinBound() {
        long gone = System.nanoTime();
        IOException e = assertThrows(IOException.class, () -> link.read(1));
        long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - gone);
        assertTrue(e.getMessage().contains("the exchange connection to the peer failed after 0 of 1 bytes"),
                e.getMessage());
        assertTrue(e.getMessage().contains("is the peer's host gone?"), e.getMessage());
        assertTrue(tookMillis < 15_000, "took " + tookMillis + " ms");
    }

    private static void must(String... cmd) throws Exception {
        assertEquals(0, sh(cmd), String.join(" ", cmd));
    }

    private static int sh(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .start();
        return p.waitFor(30, TimeUnit.SECONDS) ? p.exitValue() : -1;
    }
}
