package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.concurrent.atomic.AtomicLong;

import org.junit.jupiter.api.Test;

/**
 * An exchange read while the device it drives is busy: the wait looks at the socket only every
 * BUSY_PROGRESS_PER_READ progress calls that found work, but it must still see every byte, in whatever pieces
 * the peer sends them, and still time out.
 */
class OobLinkTest {

    /** A peer that connects and sends {@code pieces} after {@code delayMillis} each. */
    private static Thread peer(int port, long delayMillis, byte[]... pieces) {
        Thread t = new Thread(() -> {
            try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
                OutputStream out = s.getOutputStream();
                for (byte[] p : pieces) {
                    Thread.sleep(delayMillis);
                    out.write(p);
                    out.flush();
                }
                Thread.sleep(2000);   // keep the connection until the reader is done
            } catch (IOException | InterruptedException e) {
                // the test's read fails if the bytes never came
            }
        });
        t.setDaemon(true);
        t.start();
        return t;
    }

    @Test
    void readsEveryByteWhileTheDeviceIsAlwaysBusy() throws Exception {
        try (ServerSocket ss = OobLink.listen(InetAddress.getLoopbackAddress(), 0)) {
            peer(ss.getLocalPort(), 30, new byte[] {1, 2, 3}, new byte[] {4, 5, 6, 7, 8});
            AtomicLong calls = new AtomicLong();
            try (OobLink link = OobLink.accept(ss, 5000).readTimeout(10_000)) {
                link.whileWaiting(() -> {
                    calls.incrementAndGet();
                    return 1;   // always work: the wait never parks
                }, true);
                assertArrayEquals(new byte[] {1, 2, 3, 4, 5, 6, 7, 8}, link.read(8), "both pieces, in order");
            }
            assertTrue(calls.get() >= OobLink.BUSY_PROGRESS_PER_READ, "the device was driven while waiting: " + calls);
        }
    }

    @Test
    void aBusyWaitStillTimesOut() throws Exception {
        try (ServerSocket ss = OobLink.listen(InetAddress.getLoopbackAddress(), 0)) {
            peer(ss.getLocalPort(), 10_000, new byte[] {1});
            try (OobLink link = OobLink.accept(ss, 5000).readTimeout(200)) {
                link.whileWaiting(() -> 1, true);
                IOException e = assertThrows(IOException.class, () -> link.read(4));
                assertTrue(e.getMessage().contains("timed out"), e.getMessage());
            }
        }
    }

    @Test
    void anIdleWaitStillTimesOutWhetherItDrivesTheDeviceOrNot() throws Exception {
        for (boolean driving : new boolean[] {true, false}) {
            try (ServerSocket ss = OobLink.listen(InetAddress.getLoopbackAddress(), 0)) {
                peer(ss.getLocalPort(), 10_000, new byte[] {1});
                try (OobLink link = OobLink.accept(ss, 5000).readTimeout(300)) {
                    AtomicLong calls = new AtomicLong();
                    link.whileWaiting(() -> {
                        calls.incrementAndGet();
                        return 0;   // an idle device: the wait spins, yields (and without a device to drive, parks)
                    }, driving);
                    IOException e = assertThrows(IOException.class, () -> link.read(4));
                    assertTrue(e.getMessage().contains("timed out") && e.getMessage().contains("0 of 4"), e.getMessage());
                    assertTrue(calls.get() > 0, "driven: " + driving);
                }
            }
        }
    }

    @Test
    void aPeerThatClosesMidMessageEndsTheReadAtOnceSayingSo() throws Exception {
        // the read's own timeout (10 s) must not be what ends it: a closed connection is known at once
        for (boolean blocking : new boolean[] {false, true}) {
            try (ServerSocket ss = OobLink.listen(InetAddress.getLoopbackAddress(), 0)) {
                Thread t = new Thread(() -> {
                    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
                        s.getOutputStream().write(1);   // one byte of four, then the close
                    } catch (IOException e) {
                        // the read then fails without the byte, and says so
                    }
                });
                t.start();
                try (OobLink link = OobLink.accept(ss, 5000).readTimeout(10_000)) {
                    long t0 = System.nanoTime();
                    IOException e = assertThrows(IOException.class, () -> {
                        if (blocking) {
                            link.readBlocking(4, 10_000_000_000L, null);
                        } else {
                            link.read(4);
                        }
                    });
                    assertTrue(e instanceof java.io.EOFException && e.getMessage().contains("1 of 4"),
                            "blocking " + blocking + ": " + e);
                    assertTrue(System.nanoTime() - t0 < 5_000_000_000L, "blocking " + blocking);
                }
                t.join();
            }
        }
    }

    /**
     * A peer that resets the connection (its host restarted: an RST, not a FIN) ends the read at once, naming the
     * reset; the hint about a vanished host is kept for a connection that timed out (OobLinkKeepAliveTest).
     */
    @Test
    void aResetConnectionEndsTheReadNamingTheReset() throws Exception {
        try (ServerSocket ss = OobLink.listen(InetAddress.getLoopbackAddress(), 0)) {
            Thread t = new Thread(() -> {
                try (Socket s = new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
                    s.getOutputStream().write(1);
                    s.setSoLinger(true, 0);   // the close sends an RST
                } catch (IOException e) {
                    // the read then fails, and says how
                }
            });
            t.start();
            try (OobLink link = OobLink.accept(ss, 5000).readTimeout(10_000)) {
                t.join();
                IOException e = assertThrows(IOException.class, () -> link.read(4));
                assertTrue(e.getMessage().contains("the exchange connection to the peer failed after 1 of 4 bytes")
                        && e.getMessage().contains("reset"), e.getMessage());
                assertTrue(!e.getMessage().contains("host gone"), e.getMessage());
            }
        }
    }
}
