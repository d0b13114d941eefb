package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Random;

import org.junit.jupiter.api.Test;

/**
 * A UDP link's pair send (sendmmsg): both datagrams arrive, the first first, with their exact bytes and the link's
 * own address and port as the sender, over IPv4 and IPv6; a peer change is written into the native address; a first
 * datagram the kernel refuses (longer than any UDP datagram: EMSGSIZE) does not stop the second, and a refused
 * second is reported as such; a closed link sends nothing.
 */
class UdpLinkPairSendTest {

    /** Payload lengths and bytes: printed, and replayed with -Djhca.pair.seed=N. */
    private static final long SEED = Long.getLong("jhca.pair.seed", new java.security.SecureRandom().nextLong());

    /** Past the largest UDP payload over IPv4 (65,507) and IPv6: the kernel refuses it with EMSGSIZE. */
    private static final int TOO_LONG = 65_600;

    static {
        System.out.println("UdpLinkPairSendTest: seed " + SEED + "; replay with -Djhca.pair.seed=" + SEED);
    }

    private static UdpLink open(final String address) throws IOException {
        return UdpLink.open(new InetSocketAddress(InetAddress.getByName(address), 0), 1 << 20);
    }

    private static DatagramChannel receiver(final String address) throws IOException {
        final InetAddress a = InetAddress.getByName(address);
        final DatagramChannel ch = DatagramChannel.open(a.getAddress().length == 4 ? StandardProtocolFamily.INET
                : StandardProtocolFamily.INET6);
        ch.bind(new InetSocketAddress(a, 0));
        ch.configureBlocking(false);
        return ch;
    }

    /** A direct buffer holding {@code bytes} between a position and limit that are not the buffer's ends. */
    private static ByteBuffer datagram(final byte[] bytes) {
        final ByteBuffer b = ByteBuffer.allocateDirect(bytes.length + 16);
        b.position(5);
        b.put(bytes);
        b.limit(b.position()).position(5);
        return b;
    }

    private static byte[] random(final Random rnd, final int length) {
        final byte[] b = new byte[length];
        rnd.nextBytes(b);
        return b;
    }

    /** The next datagram waiting on {@code rx} (loopback delivers within the send call; the loop is a safety net). */
    private static byte[] next(final DatagramChannel rx, final SocketAddress expectedSender) throws IOException {
        final ByteBuffer in = ByteBuffer.allocate(70_000);
        for (int spins = 0; spins < 1_000_000; spins++) {
            final SocketAddress from = rx.receive(in);
            if (from != null) {
                assertEquals(expectedSender, from, "the sender is the link's own address and port");
                final byte[] out = new byte[in.flip().remaining()];
                in.get(out);
                return out;
            }
        }
        return null;
    }

    /** Nothing waiting on {@code rx}: loopback delivers within the send call, so a few looks are plenty. */
    private static void nothingWaiting(final DatagramChannel rx) throws IOException {
        final ByteBuffer in = ByteBuffer.allocate(70_000);
        for (int i = 0; i < 100; i++) {
            assertNull(rx.receive(in), "no other datagram arrived");
        }
    }

    private static void pairArrivesInOrder(final String address) throws IOException {
        final Random rnd = new Random(SEED);
        try (UdpLink link = open(address); DatagramChannel rx = receiver(address); DatagramChannel rx2 = receiver(address)) {
            for (int round = 0; round < 3; round++) {
                final DatagramChannel to = round == 1 ? rx2 : rx;   // a peer change, then back
                final byte[] ack = random(rnd, 20);
                final byte[] request = random(rnd, round == 2 ? 4140 : 1 + rnd.nextInt(1100));
                final ByteBuffer a = datagram(ack);
                final ByteBuffer r = datagram(request);
                final int sent = link.sendPair(a, r, (InetSocketAddress) to.getLocalAddress(), 0);
                assertEquals(Link.FIRST_SENT | Link.SECOND_SENT, sent, "seed " + SEED);
                assertEquals(a.limit(), a.position(), "a datagram sent is consumed, as by a channel's send");
                assertEquals(r.limit(), r.position());
                assertArrayEquals(ack, next(to, link.localAddress()), "first the first, seed " + SEED);
                assertArrayEquals(request, next(to, link.localAddress()), "then the second, seed " + SEED);
                nothingWaiting(rx);
                nothingWaiting(rx2);
            }
        }
    }

    @Test
    void bothDatagramsArriveInOrderOverIpv4() throws IOException {
        pairArrivesInOrder("127.0.7.81");
    }

    @Test
    void bothDatagramsArriveInOrderOverIpv6() throws IOException {
        try {
            open("::1").close();
        } catch (final IllegalStateException noIpv6) {
            org.junit.jupiter.api.Assumptions.abort("no IPv6 loopback here: " + noIpv6.getMessage());
        }
        pairArrivesInOrder("::1");
    }

    @Test
    void aRefusedFirstDatagramDoesNotStopTheSecond() throws IOException {
        try (UdpLink link = open("127.0.7.83"); DatagramChannel rx = receiver("127.0.7.84")) {
            final InetSocketAddress to = (InetSocketAddress) rx.getLocalAddress();
            final ByteBuffer refused = datagram(new byte[TOO_LONG]);
            final ByteBuffer request = datagram(new byte[] {1, 2, 3});
            assertEquals(Link.SECOND_SENT, link.sendPair(refused, request, to, 0));
            assertArrayEquals(new byte[] {1, 2, 3}, next(rx, link.localAddress()));
            nothingWaiting(rx);   // the refused datagram never left

            final ByteBuffer ack = datagram(new byte[] {9});
            assertEquals(Link.FIRST_SENT, link.sendPair(ack, datagram(new byte[TOO_LONG]), to, 0),
                    "a refused second is reported, not retried");
            assertArrayEquals(new byte[] {9}, next(rx, link.localAddress()));
            nothingWaiting(rx);
            assertEquals(2, link.sendErrors());
        }
    }

    @Test
    void aClosedLinkSendsNothing() throws IOException {
        final UdpLink link = open("127.0.7.85");
        try (DatagramChannel rx = receiver("127.0.7.86")) {
            link.close();
            assertEquals(0, link.sendPair(datagram(new byte[] {1}), datagram(new byte[] {2}),
                    (InetSocketAddress) rx.getLocalAddress(), 0), "no system call on a closed (perhaps reused) descriptor");
            nothingWaiting(rx);
        }
    }

    @Test
    void theDefaultPairIsTwoSendsInOrder() {
        final FaultyLinkTest.Loop loop = new FaultyLinkTest.Loop();
        final ByteBuffer a = ByteBuffer.wrap(new byte[] {1});
        final ByteBuffer b = ByteBuffer.wrap(new byte[] {2, 2});
        assertEquals(Link.FIRST_SENT | Link.SECOND_SENT, loop.sendPair(a, b, loop.self, 0));
        final ByteBuffer in = ByteBuffer.allocate(8);
        loop.receive(in);
        assertEquals(1, in.position());
        in.clear();
        loop.receive(in);
        assertEquals(2, in.position());
    }
}
