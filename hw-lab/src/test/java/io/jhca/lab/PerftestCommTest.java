package io.jhca.lab;

import io.jhca.verbs.Gid;
import io.jhca.verbs.Mtu;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jhca.testkit.ThreadPerTask;

/**
 * PerftestComm against a scripted peer that reads and writes the raw bytes perftest 6.06 would
 * (perftest_communication.c): sizes, byte order and who writes first are checked byte for byte.
 */
class PerftestCommTest {

    interface RawPeer {
        void run(DataInputStream in, DataOutputStream out) throws Exception;
    }

    /** Runs {@code peer} on a raw socket and {@code ours} on an OobLink to it; ours is the client when asked. */
    static <T> T pair(boolean oursIsClient, RawPeer peer, java.util.function.Function<PerftestComm, T> ours) throws Exception {
        try (ServerSocket ss = OobLink.listen(InetAddress.getLoopbackAddress(), 0)) {
            CompletableFuture<Void> raw;
            PerftestComm comm;
            if (oursIsClient) {
                raw = CompletableFuture.runAsync(() -> {
                    try (Socket s = ss.accept()) {
                        peer.run(new DataInputStream(s.getInputStream()), new DataOutputStream(s.getOutputStream()));
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }, ThreadPerTask.EXECUTOR);
                comm = new PerftestComm(OobLink.connect("127.0.0.1", ss.getLocalPort(), 5000), true);
            } else {
                raw = CompletableFuture.runAsync(() -> {
                    try (Socket s = new Socket(InetAddress.getLoopbackAddress(), ss.getLocalPort())) {
                        peer.run(new DataInputStream(s.getInputStream()), new DataOutputStream(s.getOutputStream()));
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }, ThreadPerTask.EXECUTOR);
                comm = new PerftestComm(OobLink.accept(ss, 5000), false);
            }
            try (comm) {
                T result = ours.apply(comm);
                raw.get(10, TimeUnit.SECONDS);
                return result;
            }
        }
    }

    static byte[] version(String v) {
        byte[] b = new byte[16];
        byte[] t = v.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(t, 0, b, 0, t.length);
        return b;
    }

    static byte[] read(DataInputStream in, int n) throws IOException {
        byte[] b = new byte[n];
        in.readFully(b);
        return b;
    }

    @FunctionalInterface
    interface IoFunction<T> {
        T apply(PerftestComm c) throws IOException;
    }

    static <T> java.util.function.Function<PerftestComm, T> io(IoFunction<T> f) {
        return c -> {
            try {
                return f.apply(c);
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        };
    }

    @Test
    void clientSideOfVersionSysDataAndMtuAgainstA606Server() throws Exception {
        Object[] r = pair(true, (in, out) -> {
            // server: read first, then write
            assertArrayEquals(version("6.06"), read(in, 16), "16-byte version, NUL padded");
            out.write(version("6.06"));
            assertEquals(4096, in.readInt(), "cycle_buffer, htonl");
            out.writeInt(8192);
            assertEquals(64, in.readInt(), "cache_line_size, htonl");
            out.writeInt(128);
            assertArrayEquals(new byte[] {'3', 0}, read(in, 2), "MTU enum as \"%d\", 2 bytes for peers >= 5.31");
            out.write(new byte[] {'2', 0});
        }, io(c -> new Object[] {c.exchangeVersions(), c.checkSysData(4096, 64), c.checkMtu(Mtu.MTU_1024)}));
        assertEquals("6.06", r[0]);
        assertArrayEquals(new int[] {8192, 128}, (int[]) r[1], "both sides take the maximum");
        assertEquals(Mtu.MTU_512, r[2], "both sides take the smaller MTU");
    }

    @Test
    void serverSideReadsBeforeWriting() throws Exception {
        Object[] r = pair(false, (in, out) -> {
            // a C client writes first; our server answers only after reading
            out.write(version("6.29"));
            assertArrayEquals(version("6.06"), read(in, 16));
            out.writeInt(4096);
            assertEquals(4096, in.readInt());
            out.writeInt(32);
            assertEquals(64, in.readInt());
            out.write(new byte[] {'5', 0});
            assertArrayEquals(new byte[] {'3', 0}, read(in, 2));
        }, io(c -> new Object[] {c.exchangeVersions(), c.checkSysData(4096, 64), c.checkMtu(Mtu.MTU_1024)}));
        assertEquals("6.29", r[0]);
        assertArrayEquals(new int[] {4096, 64}, (int[]) r[1]);
        assertEquals(Mtu.MTU_1024, r[2], "a larger peer MTU does not raise ours");
    }

    @Test
    void refusesPeersOlderThan570() throws Exception {
        RuntimeException e = assertThrows(RuntimeException.class, () -> pair(true, (in, out) -> {
            read(in, 16);
            out.write(version("5.60"));
        }, io(PerftestComm::exchangeVersions)));
        assertTrue(HwLab.describe(e).contains("5.70"), HwLab.describe(e));
    }

    @Test
    void keyHandshakeAndBwReportsAndClose() throws Exception {
        PerftestDest mine = new PerftestDest(0, 1, 0x11, 0x123456, 0x100, 0x7f0000001000L,
                Gid.parse("00000000000000000000ffff7f000002"), 0);
        PerftestDest theirs = new PerftestDest(0, 1, 0x12, 0x654321, 0x200, 0x7f0000002000L,
                Gid.parse("00000000000000000000ffff7f000001"), 0);
        Object[] r = pair(true, (in, out) -> {
            read(in, 16);
            out.write(version("6.06"));
            assertArrayEquals(mine.encode(), read(in, 108));
            out.write(theirs.encode());
            // xchg_bw_reports: size (8), iters (8 for >= 5.33), bw_peak, bw_avg, msgRate as big-endian doubles
            assertEquals(65536L, in.readLong());
            out.writeLong(0);
            assertEquals(5000L, in.readLong());
            out.writeLong(0);
            assertEquals(1234.5, in.readDouble());
            out.writeDouble(0);
            assertEquals(1000.25, in.readDouble());
            out.writeDouble(0);
            assertEquals(0.016, in.readDouble());
            out.writeDouble(0);
            // ctx_close_connection: a handshake, then "done" and close
            assertArrayEquals(mine.encode(), read(in, 108));
            out.write(theirs.encode());
            assertArrayEquals("done\0".getBytes(StandardCharsets.US_ASCII), read(in, 5));
            assertEquals(-1, in.read(), "the client closes after done");
        }, io(c -> {
            c.exchangeVersions();
            PerftestDest got = c.handshake(mine);
            c.exchangeBwReports(new PerftestComm.BwReport(65536, 5000, 1234.5, 1000.25, 0.016));
            c.closeConnection(mine);
            return new Object[] {got};
        }));
        assertEquals(theirs, r[0]);
    }

    @Test
    void versionNumbersParseLikeAtof() {
        assertEquals(6.06, PerftestComm.versionNumber("6.06"), 1e-9);
        assertEquals(5.7, PerftestComm.versionNumber("5.70"), 1e-9);
        assertEquals(0, PerftestComm.versionNumber(""), 1e-9);
        assertEquals(0, PerftestComm.versionNumber("x"), 1e-9);
        assertEquals(6.29, PerftestComm.versionNumber("6.29 beta"), 1e-9);
        assertTrue(Arrays.equals(version("6.06"), Arrays.copyOf("6.06".getBytes(StandardCharsets.US_ASCII), 16)));
    }

    @Test
    void theOldestPeerTakenIs570() throws Exception {
        // check_version_compatibility refuses what atof() reads below 5.70, and nothing from 5.70 on
        assertEquals("5.70", pair(true, (in, out) -> {
            read(in, 16);
            out.write(version("5.70"));
        }, io(PerftestComm::exchangeVersions)));
        RuntimeException e = assertThrows(RuntimeException.class, () -> pair(true, (in, out) -> {
            read(in, 16);
            out.write(version("5.69"));
        }, io(PerftestComm::exchangeVersions)));
        assertTrue(HwLab.describe(e).contains("peer sent '5.69'"), HwLab.describe(e));
    }

    @Test
    void anMtuOutsideOneToFiveFromThePeerLeavesOursAsPerftestDoes() throws Exception {
        // valid_mtu_size: a value that is no IBV_MTU_* is ignored, not taken (and not a crash on Mtu.of(0))
        for (String rem : new String[] {"0", "6", "x"}) {
            Mtu got = pair(true, (in, out) -> {
                read(in, 16);
                out.write(version("6.06"));
                read(in, 2);
                out.write(new byte[] {(byte) rem.charAt(0), 0});
            }, io(c -> {
                c.exchangeVersions();
                return c.checkMtu(Mtu.MTU_1024);
            }));
            assertEquals(Mtu.MTU_1024, got, "the peer sent \"" + rem + "\"");
        }
    }

    @Test
    void aLastMessageThatIsNotDoneEndsTheFloorsConnection() throws Exception {
        // two hwlab sides keep the connection after "done" for the UDP floors: bytes other than "done" there mean the
        // two no longer agree on where they are, and the floors that would follow must not start
        PerftestDest mine = new PerftestDest(0, 1, 0x11, 0x123456, 0x100, 0x1000L, null, 0);
        RuntimeException e = assertThrows(RuntimeException.class, () -> pair(true, (in, out) -> {
            read(in, 16);
            out.write(version("6.06"));
            read(in, PerftestDest.SIZE_NO_GID);
            out.write(mine.encode());
            read(in, 5);
            out.write("nope\0".getBytes(StandardCharsets.US_ASCII));
        }, io(c -> {
            c.exchangeVersions();
            c.keepOpenAfterDone();
            c.closeConnection(mine);
            return c.afterDone();
        })));
        assertTrue(HwLab.describe(e).contains("not \"done\""), HwLab.describe(e));
    }

    @Test
    void theServerRefusesABandwidthReportNoRunMakesAndTheClientTakesAny() throws Exception {
        // the server prints the client's report as the run's result; a C perftest server sends a report it never
        // filled in, so the client must take whatever comes
        Object[][] bad = {
            {-1L, 5000L, 1.0, 1.0, 1.0, "size -1"},
            {65536L, -1L, 1.0, 1.0, 1.0, "iterations -1"},
            {65536L, 5000L, Double.NaN, 1.0, 1.0, "BW peak NaN"},
            {65536L, 5000L, 1.0, -1.0, 1.0, "BW average -1.0"},
            {65536L, 5000L, 1.0, 1.0, Double.POSITIVE_INFINITY, "MsgRate Infinity"},
        };
        for (Object[] r : bad) {
            RawPeer client = (in, out) -> {
                out.writeLong((long) r[0]);
                in.readLong();
                out.writeLong((long) r[1]);
                in.readLong();
                for (int i = 2; i < 5; i++) {
                    out.writeDouble((double) r[i]);
                    in.readDouble();
                }
            };
            RuntimeException e = assertThrows(RuntimeException.class, () -> pair(false, client,
                    io(c -> c.exchangeBwReports(new PerftestComm.BwReport(0, 0, 0, 0, 0)))));
            assertTrue(HwLab.describe(e).contains("bandwidth report is out of range") && HwLab.describe(e).contains(
                    (String) r[5]), HwLab.describe(e));
            RawPeer server = (in, out) -> {
                in.readLong();
                out.writeLong((long) r[0]);
                in.readLong();
                out.writeLong((long) r[1]);
                for (int i = 2; i < 5; i++) {
                    in.readDouble();
                    out.writeDouble((double) r[i]);
                }
            };
            PerftestComm.BwReport got = pair(true, server,
                    io(c -> c.exchangeBwReports(new PerftestComm.BwReport(65536, 5000, 1, 1, 1))));
            assertEquals((long) r[0], got.size(), "the client takes it as it came: " + r[5]);
        }
    }
}
