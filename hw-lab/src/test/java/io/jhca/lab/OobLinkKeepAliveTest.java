package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The exchange connection fails, instead of waiting for ever, when the peer's host goes away without closing it:
 * a peer in a network namespace of this test's, reached over a veth pair, whose end is then taken down, so nothing
 * it sent or would send arrives (no FIN, no RST). As root; skipped with the reason otherwise.
 */
@Timeout(60)
class OobLinkKeepAliveTest {
    static final String NS = "jhca-oob-ka";
    static final String HOST_END = "jhcaka0";
    static final String PEER_END = "jhcaka1";
    static final String HOST_IP = "10.203.77.1";
    static final String PEER_IP = "10.203.77.2";

    @Test
    void aPeerWhoseHostVanishedFailsTheReadWithinTheKeepaliveBound() throws Exception {
        assumeTrue("root".equals(System.getProperty("user.name")), "needs root: it creates a network namespace");
        assumeTrue(sh("ip", "-V") == 0, "needs iproute2 ('ip')");
        sh("ip", "netns", "del", NS); // left by a killed run
        try {
            must("ip", "netns", "add", NS);
            must("ip", "link", "add", HOST_END, "type", "veth", "peer", "name", PEER_END, "netns", NS);
            must("ip", "addr", "add", HOST_IP + "/30", "dev", HOST_END);
            must("ip", "link", "set", HOST_END, "up");
            must("ip", "-n", NS, "addr", "add", PEER_IP + "/30", "dev", PEER_END);
            must("ip", "-n", NS, "link", "set", PEER_END, "up");
            must("ip", "-n", NS, "link", "set", "lo", "up");
            // the peer: the namespace's end of the pair is this process's too (a socket keeps the namespace it was
            // made in), so a listening socket made there needs a process there; the kernel answers the handshake
            // and the keepalive probes of an accepted-but-idle connection by itself, so a listener that never
            // accepts is peer enough
            Process peer = new ProcessBuilder("ip", "netns", "exec", NS, "python3", "-c",
                    "import socket,time\n"
                            + "s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
                            + "s.bind(('" + PEER_IP + "', 18515)); s.listen(1); print('up', flush=True); time.sleep(120)\n")
                    .redirectErrorStream(true).start();
            try {
                assertEquals("up", new String(peer.getInputStream().readNBytes(2)), "the peer did not start");
                OobLink link = OobLink.connect(PEER_IP, 18515, 5000).keepAlive(1, 1, 2);
                // while the peer's host is there, its kernel answers the probes: the connection holds past their bound
                long quiet = System.nanoTime();
                IOException none = null;
                link.readTimeout(4000);
                try {
                    link.read(1);
                } catch (IOException e) {
                    none = e;
                }
                assertTrue(none != null && none.getMessage().contains("timed out waiting for the peer"),
                        "a live peer's silence ends by the read timeout, not the keepalive: " + none);
                assertTrue(System.nanoTime() - quiet >= TimeUnit.SECONDS.toNanos(4));
                link.readTimeout(0);
                must("ip", "-n", NS, "link", "set", PEER_END, "down"); // the host is gone: nothing answers
                long gone = System.nanoTime();
                IOException e = assertThrows(IOException.class, () -> link.read(1));
                long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - gone);
                assertTrue(e.getMessage().contains("the exchange connection to the peer failed after 0 of 1 bytes"),
                        e.getMessage());
                assertTrue(e.getMessage().contains("is the peer's host gone?"), e.getMessage());
                // 1 s idle and 2 probes 1 s apart: about 3 s; the default timing would take about 25 s
                assertTrue(tookMillis < 15_000, "took " + tookMillis + " ms");
                link.close();
            } finally {
                peer.destroyForcibly();
                peer.waitFor();
            }
        } finally {
            sh("ip", "netns", "del", NS); // takes the veth pair with it
        }
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
