package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The UDP floors with their other end in the server's process ({@link RemoteFloors}), over a real TCP connection and
 * real sockets on 127.0.0.1 (server) and 127.0.0.2 (client): every floor measures what it was asked, a stream loses
 * nothing in either direction, the server's failures reach the client with their reason, a client that stops ends
 * the server's end at once, and a request the server does not understand stops the floors instead of desynchronizing.
 */
@Timeout(60)
class RemoteFloorsTest {
    private static final long STALL = 20_000_000_000L;

    /** The client's end and the server's {@code serve} (its result: floors run) over one connection. */
    private static final class Pair implements AutoCloseable {
        final OobLink client;
        final OobLink server;
        final CompletableFuture<Integer> served;

        Pair(InetAddress serverUdp) throws IOException {
            this(serverUdp, STALL);
        }

        /** {@code quietNanos}: how long the server waits for a word from the client while none of its ends runs. */
        Pair(InetAddress serverUdp, long quietNanos) throws IOException {
            OobLink[] ends = connection();
            client = ends[0];
            server = ends[1];
            served = CompletableFuture.supplyAsync(() -> {
                try {
                    return RemoteFloors.serve(server, serverUdp, InetAddress.getByName("127.0.0.2"), quietNanos);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
        }

        RemoteFloors floors() throws IOException {
            return new RemoteFloors(client, InetAddress.getByName("127.0.0.2"), InetAddress.getByName("127.0.0.1"));
        }

        int end() throws Exception {
            RemoteFloors.end(client);
            return served.get(20, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws IOException {
            client.close();
            server.close();
        }
    }

    /** Both ends of a TCP connection on loopback: the client's, then the server's. */
    private static OobLink[] connection() throws IOException {
        try (ServerSocket ss = OobLink.listen(InetAddress.getLoopbackAddress(), 0)) {
            CompletableFuture<OobLink> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return OobLink.accept(ss, 10_000);
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            });
            OobLink client = OobLink.connect("127.0.0.1", ss.getLocalPort(), 10_000);
            return new OobLink[] {client, accepted.join()};
        }
    }

    @Test
    void everyFloorRunsWithTheServersEndAndTheServerCountsThem() throws Exception {
        try (Pair p = new Pair(InetAddress.getByName("127.0.0.1"))) {
            RemoteFloors f = p.floors();
            for (UdpFloor kind : UdpFloor.values()) {
                LatencyStats s = f.latency(kind, 2, 300, 100, 2, STALL, 0);
                assertEquals(2, s.size(), kind.name());
                assertEquals(300, s.iters(), kind.name());
                assertTrue(s.tMin() > 0 && s.tTypical() >= s.tMin() && s.tMax() >= s.tTypical(), kind + " " + s);
            }
            // 10000 bytes in datagrams of one 4096-byte MTU: three per message, the last not full
            for (boolean toServer : new boolean[] {true, false}) {
                UdpStream.Result r = f.stream(toServer, 10_000, 7, 4096, 2, STALL, 0);
                assertEquals(7, r.iters(), "to the server: " + toServer);
                assertEquals(0, r.datagramsLost(), "to the server: " + toServer + " " + r);
                assertTrue(r.mibPerSec() > 0, r.toString());
                // a bandwidth test's default message, larger than any datagram: 16 of 4096 bytes each
                UdpStream.Result big = f.stream(toServer, 65_536, 3, 4096, 2, STALL, 0);
                assertEquals(3, big.iters(), "to the server: " + toServer);
                assertEquals(0, big.datagramsLost(), "to the server: " + toServer + " " + big);
            }
            assertEquals(7, p.end(), "three latency floors and four streams ran at the server");
        }
    }

    @Test
    void aTimeLimitEndsTheStreamInEitherDirectionWithNothingLost() throws Exception {
        try (Pair p = new Pair(InetAddress.getByName("127.0.0.1"))) {
            long asked = 1_000_000_000L;
            for (boolean toServer : new boolean[] {true, false}) {
                UdpStream.Result r = p.floors().stream(toServer, 10_000, asked, 4096, 8, STALL, 200_000_000L);
                assertTrue(r.iters() > 0 && r.iters() < asked, "to the server: " + toServer + " " + r);
                assertEquals(0, r.datagramsLost(), "to the server: " + toServer + " " + r);
            }
            assertEquals(2, p.end());
        }
    }

    @Test
    void aFloorTheServerCannotBindIsNamedAndTheNextStillRuns() throws Exception {
        // TEST-NET-1 (RFC 5737): never an address of this host
        try (Pair p = new Pair(InetAddress.getByName("192.0.2.1"))) {
            RemoteFloors f = p.floors();
            for (UdpFloor kind : UdpFloor.values()) {
                IOException e = assertThrows(IOException.class, () -> f.latency(kind, 2, 10, 0, 2, STALL, 0));
                assertTrue(e.getMessage().contains("192.0.2.1"), kind + ": " + e.getMessage());
            }
            IOException e = assertThrows(IOException.class, () -> f.stream(true, 64, 1, 4096, 1, STALL, 0));
            assertTrue(e.getMessage().contains("192.0.2.1"), e.getMessage());
            assertEquals(0, p.end(), "nothing ran, and the connection is still in step");
        }
    }

    @Test
    void aClientThatStopsEndsTheServersEndAtOnce() throws Exception {
        try (Pair p = new Pair(InetAddress.getByName("127.0.0.1"))) {
            // an echo asked for 1000 round trips that never come, with a stall timeout longer than the test's: only
            // the client's done can end it
            ByteBuffer reply = request(p.client, 1, 2, 1000, 60_000_000_000L);
            assertEquals(0, reply.getInt(), "the server bound its socket");
            p.client.write(ByteBuffer.allocate(8).putInt(1).array());   // done: failed
            ByteBuffer result = ByteBuffer.wrap(p.client.read(32));
            assertEquals(0, result.getInt(), "the server's end was ended, not failed");
            assertEquals(0, result.getInt(28), "no error text");
            assertEquals(1, p.end());
        }
    }

    @Test
    void theServersFailureReachesTheClientWithItsReason() throws Exception {
        try (Pair p = new Pair(InetAddress.getByName("127.0.0.1"))) {
            // a stall timeout of 50 ms and no datagram: the echo fails on its own before the client's done
            ByteBuffer reply = request(p.client, 1, 2, 1000, 50_000_000L);
            assertEquals(0, reply.getInt());
            Thread.sleep(500);
            p.client.write(ByteBuffer.allocate(8).putInt(0).array());
            ByteBuffer result = ByteBuffer.wrap(p.client.read(32));
            assertEquals(1, result.getInt(), "failed");
            String text = new String(p.client.read(result.getInt(28)), StandardCharsets.UTF_8);
            assertTrue(text.contains("stalled"), text);
            assertEquals(1, p.end());
        }
    }

    @Test
    void aClientThatFallsSilentBeforeItsNextRequestEndsTheServerAfterItsStallTimeout() throws Exception {
        // the connection stays open (a client host that went away closes nothing)
        try (Pair p = new Pair(InetAddress.getByName("127.0.0.1"), 300_000_000L)) {
            IOException e = silence(p);
            assertTrue(e.getMessage().contains("0 of " + RemoteFloors.REQUEST + " bytes came"), e.getMessage());
        }
    }

    @Test
    void aClientThatFallsSilentAfterItsFloorEndsTheServerAfterItsStallTimeout() throws Exception {
        try (Pair p = new Pair(InetAddress.getByName("127.0.0.1"), 300_000_000L)) {
            // the echo's own stall timeout (100 ms) ends it; then the server waits for a done that never comes
            assertEquals(0, request(p.client, 1, 2, 1000, 100_000_000L).getInt());
            IOException e = silence(p);
            assertTrue(e.getMessage().contains("0 of 8 bytes came"), e.getMessage());
        }
    }

    @Test
    void theServersBoundDoesNotCutAFloorThatRunsLongerThanIt() throws Exception {
        try (Pair p = new Pair(InetAddress.getByName("127.0.0.1"), 200_000_000L)) {
            // an echo waiting for datagrams (stall timeout 60 s): a second without a word from the client is the
            // floor running, not the client gone
            assertEquals(0, request(p.client, 1, 2, 1000, 60_000_000_000L).getInt());
            Thread.sleep(1000);
            assertTrue(!p.served.isDone(), "the server still serves");
            p.client.write(ByteBuffer.allocate(8).putInt(1).array());   // done
            ByteBuffer result = ByteBuffer.wrap(p.client.read(32));
            assertEquals(0, result.getInt(), "the server's end was ended, not failed");
            assertEquals(1, p.end());
        }
    }

    @Test
    void aServerThatFallsSilentEndsTheClientsFloorAfterItsStallTimeout() throws Exception {
        // a server that takes the connection and reads the request, then answers nothing and closes nothing
        OobLink[] ends = connection();
        try (OobLink client = ends[0]; OobLink server = ends[1]) {
            RemoteFloors f = new RemoteFloors(client, InetAddress.getByName("127.0.0.2"),
                    InetAddress.getByName("127.0.0.1"));
            IOException e = assertThrows(IOException.class,
                    () -> f.latency(UdpFloor.PLAIN, 2, 10, 0, 2, 300_000_000L, 0));
            assertTrue(e.getMessage().startsWith("nothing from the peer for "), e.getMessage());
            assertEquals(RemoteFloors.REQUEST, server.read(RemoteFloors.REQUEST).length, "the request was sent");
        }
    }

    /** Says nothing more and returns how the server's serve failed (it must, within the test's time). */
    private static IOException silence(Pair p) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> p.served.get(20, TimeUnit.SECONDS));
        Throwable c = e.getCause() instanceof RuntimeException && e.getCause().getCause() != null
                ? e.getCause().getCause() : e.getCause();
        assertTrue(c instanceof IOException, "a broken connection: " + c);
        assertTrue(c.getMessage().startsWith("nothing from the peer for "), c.getMessage());
        return (IOException) c;
    }

    @Test
    void aRequestTheServerDoesNotUnderstandStopsTheFloors() throws Exception {
        // an unknown kind, a negative size, no iterations, more than a datagram holds, an empty stream
        for (int[] bad : new int[][] {{99, 2, 10}, {1, -1, 10}, {1, 2, 0}, {1, 70_000, 10}, {4, 0, 10}}) {
            String what = "kind " + bad[0] + " size " + bad[1] + " iters " + bad[2];
            try (Pair p = new Pair(InetAddress.getByName("127.0.0.1"))) {
                ByteBuffer reply = request(p.client, bad[0], bad[1], bad[2], STALL);
                assertEquals(1, reply.getInt(), "refused: " + what);
                String text = new String(p.client.read(reply.getInt(16)), StandardCharsets.UTF_8);
                assertTrue(text.contains("does not understand"), what + ": " + text);
                assertEquals(0, p.served.get(20, TimeUnit.SECONDS), "the server stopped serving: " + what);
            }
        }
    }

    /**
     * A request written as the protocol lays it out (kind, size, iters, warmup 0, rtt factor 2, no gap, the stall,
     * the client's port 9, mtu 4096, tx depth 1, no limit, window 1); returns the reply's fixed part.
     */
    private static ByteBuffer request(OobLink link, int kind, int size, long iters, long stallNanos) throws IOException {
        link.write(requestBytes(kind, size, iters, 0, 2, 0, stallNanos, 9, 4096, 1, 0, 1));
        return ByteBuffer.wrap(link.read(20));
    }

    @Test
    void aRequestWithAnyFieldOutOfRangeIsRefused() throws Exception {
        // each field the server's end would run with, one past what it takes: a stall of 0 would let an end that never
        // finishes keep the server waiting for ever, a count past an int would wrap, a port
        // past 65535 is no address (an InetSocketAddress would throw what the server's caller does not catch)
        int max = UdpBaseline.MAX_PAYLOAD;
        Object[][] cases = {
            // what, kind, size, iters, warmup, rtt factor, gap, stall, port, mtu, tx depth, limit, window
            {"no stall timeout", 1, 2, 10L, 0, 2, 0L, 0L, 9, 4096, 1, 0L, 1L},
            {"a negative warm-up", 1, 2, 10L, -1, 2, 0L, STALL, 9, 4096, 1, 0L, 1L},
            {"more round trips than an int", 1, 2, (long) Integer.MAX_VALUE, 1, 2, 0L, STALL, 9, 4096, 1, 0L, 1L},
            {"rtt factor 0", 1, 2, 10L, 0, 0, 0L, STALL, 9, 4096, 1, 0L, 1L},
            {"rtt factor 3", 1, 2, 10L, 0, 3, 0L, STALL, 9, 4096, 1, 0L, 1L},
            {"a negative gap", 1, 2, 10L, 0, 2, -1L, STALL, 9, 4096, 1, 0L, 1L},
            {"one byte more than a datagram", 1, max + 1, 10L, 0, 2, 0L, STALL, 9, 4096, 1, 0L, 1L},
            {"client port 0", 1, 2, 10L, 0, 2, 0L, STALL, 0, 4096, 1, 0L, 1L},
            {"client port 65536", 1, 2, 10L, 0, 2, 0L, STALL, 65536, 4096, 1, 0L, 1L},
            {"mtu 0", 4, 100, 10L, 0, 0, 0L, STALL, 9, 0, 1, 0L, 1L},
            {"tx depth 0", 4, 100, 10L, 0, 0, 0L, STALL, 9, 4096, 0, 0L, 1L},
            {"a negative window", 5, 100, 10L, 0, 0, 0L, STALL, 9, 4096, 1, 0L, -1L},
            {"a negative time limit", 4, 100, 10L, 0, 0, 0L, STALL, 9, 4096, 1, -1L, 1L},
            {"more bytes than a long", 4, 100, Long.MAX_VALUE / 100 + 1, 0, 0, 0L, STALL, 9, 4096, 1, 0L, 1L},
        };
        for (Object[] c : cases) {
            try (Pair p = new Pair(InetAddress.getByName("127.0.0.1"))) {
                p.client.write(requestBytes((int) c[1], (int) c[2], (long) c[3], (int) c[4], (int) c[5], (long) c[6],
                        (long) c[7], (int) c[8], (int) c[9], (int) c[10], (long) c[11], (long) c[12]));
                ByteBuffer reply = ByteBuffer.wrap(p.client.read(20));
                assertEquals(1, reply.getInt(), "refused: " + c[0]);
                String text = new String(p.client.read(reply.getInt(16)), StandardCharsets.UTF_8);
                assertTrue(text.contains("does not understand"), c[0] + ": " + text);
                assertEquals(0, p.served.get(20, TimeUnit.SECONDS), "nothing ran: " + c[0]);
            }
        }
    }

    @Test
    void aReplyWhoseFieldsLieEndsTheFloorWithAnIoException() throws Exception {
        // a server's reply of status OK with a text length of -1 or one past the bound, or a port that is none: the
        // client must neither allocate what the length says nor wait for bytes that are not coming, nor throw what
        // the run's floors do not catch (an IllegalArgumentException ended the whole tool)
        int[][] replies = {{9, -1}, {9, 4097}, {70000, 0}, {0, 0}};   // port, text length
        for (int[] r : replies) {
            OobLink[] ends = connection();
            try (OobLink client = ends[0]; OobLink server = ends[1]) {
                CompletableFuture<Void> lying = CompletableFuture.runAsync(() -> {
                    try {
                        server.read(RemoteFloors.REQUEST);
                        server.write(ByteBuffer.allocate(20).putInt(0).putInt(r[0]).putLong(0).putInt(r[1]).array());
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                });
                RemoteFloors f = new RemoteFloors(client, InetAddress.getByName("127.0.0.2"),
                        InetAddress.getByName("127.0.0.1"));
                IOException e = assertThrows(IOException.class,
                        () -> f.latency(UdpFloor.PLAIN, 2, 10, 0, 2, 300_000_000L, 0));
                String says = r[1] != 0 ? "text of " + r[1] + " bytes" : "at port " + r[0] + " ";
                assertTrue(e.getMessage().contains(says),
                        Arrays.toString(r) + ": " + e.getMessage());
                lying.get(10, TimeUnit.SECONDS);
            }
        }
    }

    /** A request's bytes: its fields in the protocol's order, big-endian. */
    private static byte[] requestBytes(int kind, int size, long iters, int warmup, int rttFactor, long gapNanos,
            long stallNanos, int port, int mtu, int txDepth, long limitNanos, long window) {
        return ByteBuffer.allocate(RemoteFloors.REQUEST).putInt(kind).putInt(size).putLong(iters).putInt(warmup)
                .putInt(rttFactor).putLong(gapNanos).putLong(stallNanos).putInt(port).putInt(mtu).putInt(txDepth)
                .putLong(limitNanos).putLong(window).array();
    }

    @Test
    void aServersEndThatFailsIsReportedEvenWhenTheClientsEndRan() throws Exception {
        // a server whose end failed says so in its result; the client's end, which got all its answers, must not make
        // it a floor measured. Here the server is this test: an echo that answers every datagram, then reports failure.
        for (boolean latency : new boolean[] {true, false}) {
            OobLink[] ends = connection();
            try (OobLink client = ends[0]; OobLink server = ends[1];
                 java.nio.channels.DatagramChannel echo = java.nio.channels.DatagramChannel.open()) {
                echo.bind(new java.net.InetSocketAddress(InetAddress.getByName("127.0.0.1"), 0));
                CompletableFuture<Void> failing = CompletableFuture.runAsync(() -> {
                    try {
                        server.read(RemoteFloors.REQUEST);
                        int port = ((java.net.InetSocketAddress) echo.getLocalAddress()).getPort();
                        server.write(ByteBuffer.allocate(20).putInt(0).putInt(port).putLong(0).putInt(0).array());
                        ByteBuffer b = ByteBuffer.allocate(64);
                        for (int i = 0; latency && i < 10; i++) {
                            echo.send(b.clear().flip(), echo.receive(b.clear()));
                        }
                        server.read(8);   // the client's done, or its go for a stream from the server
                        byte[] text = "boom".getBytes(StandardCharsets.UTF_8);
                        server.write(ByteBuffer.allocate(32 + text.length).putInt(1).putLong(0).putLong(0).putLong(0)
                                .putInt(text.length).put(text).array());
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                });
                RemoteFloors f = new RemoteFloors(client, InetAddress.getByName("127.0.0.2"),
                        InetAddress.getByName("127.0.0.1"));
                IOException e = assertThrows(IOException.class, () -> {
                    if (latency) {
                        f.latency(UdpFloor.PLAIN, 2, 10, 0, 2, 2_000_000_000L, 0);
                    } else {
                        f.stream(false, 100, 1, 4096, 1, 2_000_000_000L, 0);
                    }
                });
                assertTrue(e.getMessage().contains("failed: boom"), "latency " + latency + ": " + e.getMessage());
                failing.get(10, TimeUnit.SECONDS);
            }
        }
    }
}
