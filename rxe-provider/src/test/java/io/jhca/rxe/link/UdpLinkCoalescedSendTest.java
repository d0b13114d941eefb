package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.List;
import java.util.Random;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * A loopback link's coalesced pair (one UDP GSO datagram): a link that takes coalesced datagrams whole hands the two
 * over as two batch entries, segments 0 and 1, with their exact bytes, from one slot (so they did arrive as one);
 * a plain socket gets two datagrams, split by the kernel, the first first; over IPv4 and IPv6. Pairs the link must
 * not coalesce (the first shorter, too long together, a link opened without, a wildcard address) are not; a foreign
 * coalesced datagram of more segments than the batch's room comes whole, and a batch with room for less than a pair
 * is left alone. A link of several addresses coalesces per address.
 */
class UdpLinkCoalescedSendTest {

    /** Payload lengths and bytes: printed, and replayed with -Djhca.coalesced.seed=N. */
    private static final long SEED = Long.getLong("jhca.coalesced.seed", new java.security.SecureRandom().nextLong());

    static {
        System.out.println("UdpLinkCoalescedSendTest: seed " + SEED + "; replay with -Djhca.coalesced.seed=" + SEED);
    }

    private static UdpLink open(final String address, final boolean coalesce) throws IOException {
        return UdpLink.open(new InetSocketAddress(InetAddress.getByName(address), 0), 1 << 20, coalesce);
    }

    /** A link that receives by its socket (recvmmsg), never from a packet ring: the socket path's own behaviour. */
    private static UdpLink bySocket(final String address) throws IOException {
        return UdpLink.open(new InetSocketAddress(InetAddress.getByName(address), 0), 1 << 20, true, false);
    }

    private static ByteBuffer datagram(final byte[] bytes) {
        final ByteBuffer b = ByteBuffer.allocateDirect(bytes.length + 16);
        b.position(3);
        b.put(bytes);
        b.limit(b.position()).position(3);
        return b;
    }

    private static byte[] random(final Random rnd, final int length) {
        final byte[] b = new byte[length];
        rnd.nextBytes(b);
        return b;
    }

    private static byte[] bytes(final RxBatch batch, final int i) {
        final byte[] out = new byte[batch.length(i)];
        new UnsafeBuffer(batch.address(i), batch.length(i)).getBytes(0, out);
        return out;
    }

    /** Receives into {@code batch} until {@code n} entries are there (loopback delivers within the send call). */
    private static void receive(final UdpLink link, final RxBatch batch, final int n) {
        for (int spins = 0; spins < 1_000_000 && batch.count() < n; spins++) {
            link.receive(batch);
        }
        assertEquals(n, batch.count(), "entries received");
    }

    private static void pairArrivesWholeAndSplit(final String a, final String b) throws IOException {
        pairArrivesWholeAndSplit(a, b, true);
    }

    private static void pairArrivesWholeAndSplit(final String a, final String b, final boolean ring)
            throws IOException {
        final Random rnd = new Random(SEED);
        final byte[] first = random(rnd, 20 + rnd.nextInt(2000));
        final byte[] second = random(rnd, 1 + rnd.nextInt(first.length));   // no longer than the first
        try (UdpLink tx = open(a, true); UdpLink rx = ring ? open(b, true) : bySocket(b)) {
            assertTrue(tx.sendsCoalesced(first.length, second.length, 0));
            final ByteBuffer f = datagram(first);
            final ByteBuffer s = datagram(second);
            assertEquals(Link.FIRST_SENT | Link.SECOND_SENT, tx.sendCoalesced(f, s, rx.localAddress(), 0));
            assertEquals(f.limit(), f.position(), "a datagram taken has its position at its limit");
            assertEquals(s.limit(), s.position());
            final RxBatch batch = new RxBatch(8, 16 * 1024);
            receive(rx, batch, 2);
            assertArrayEquals(first, bytes(batch, 0));
            assertArrayEquals(second, bytes(batch, 1));
            assertEquals(0, batch.segment(0));
            assertEquals(1, batch.segment(1));
            assertEquals(batch.address(0) + first.length, batch.address(1), "whole, and split here");
            if (rx.receivePath().equals("packet ring")) {
                // in the ring's frame, where a parser may read to the datagram's end
                assertEquals(first.length + second.length, batch.bytesToSlotEnd(0));
                assertEquals(second.length, batch.bytesToSlotEnd(1));
            } else {
                assertEquals(batch.slotAddress(0), batch.address(0), "the datagram came in one slot");
                assertEquals(16 * 1024 - first.length, batch.bytesToSlotEnd(1));
            }
            assertEquals(tx.localAddress(), batch.source(0));
            assertEquals(tx.localAddress(), batch.source(1));
        }
    }

    @Test
    void aCoalescedPairArrivesWholeAndIsSplitOverIpv4() throws IOException {
        pairArrivesWholeAndSplit("127.0.7.91", "127.0.7.92");
    }

    @Test
    void aCoalescedPairArrivesWholeAndIsSplitByTheSocketOverIpv4() throws IOException {
        pairArrivesWholeAndSplit("127.0.7.108", "127.0.7.109", false);
    }

    @Test
    void aCoalescedPairArrivesWholeAndIsSplitOverIpv6() throws IOException {
        pairArrivesWholeAndSplit("::1", "::1");
    }

    @Test
    void aPlainSocketGetsTwoDatagramsSplitByTheKernel() throws IOException {
        final Random rnd = new Random(SEED + 1);
        final byte[] first = random(rnd, 40 + rnd.nextInt(1000));
        final byte[] second = random(rnd, 20);
        try (UdpLink tx = open("127.0.7.93", true);
             DatagramChannel rx = DatagramChannel.open(StandardProtocolFamily.INET)) {
            rx.bind(new InetSocketAddress(InetAddress.getByName("127.0.7.94"), 0)).configureBlocking(false);
            assertEquals(Link.FIRST_SENT | Link.SECOND_SENT,
                    tx.sendCoalesced(datagram(first), datagram(second), (InetSocketAddress) rx.getLocalAddress(), 0));
            assertArrayEquals(first, next(rx, tx.localAddress()));
            assertArrayEquals(second, next(rx, tx.localAddress()));
        }
    }

    private static byte[] next(final DatagramChannel rx, final SocketAddress sender) throws IOException {
        final ByteBuffer in = ByteBuffer.allocate(70_000);
        for (int spins = 0; spins < 1_000_000; spins++) {
            final SocketAddress from = rx.receive(in);
            if (from != null) {
                assertEquals(sender, from);
                final byte[] out = new byte[in.flip().remaining()];
                in.get(out);
                return out;
            }
        }
        return null;
    }

    @Test
    void pairsThatCannotOrMustNotBeCoalescedAreNot() throws IOException {
        try (UdpLink on = open("127.0.7.95", true); UdpLink off = open("127.0.7.96", false);
             UdpLink wildcard = UdpLink.open(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0), 1 << 20,
                     true)) {
            assertTrue(on.sendsCoalesced(36, 20, 0));
            assertTrue(on.sendsCoalesced(20, 20, 0), "equal lengths: two full segments");
            assertFalse(on.sendsCoalesced(19, 20, 0), "GSO segments all have the first's size but the last");
            assertFalse(on.sendsCoalesced(20, 0, 0), "an empty second datagram would not be one");
            assertTrue(on.sendsCoalesced(UdpLink.MAX_COALESCED - 20, 20, 0));
            assertFalse(on.sendsCoalesced(UdpLink.MAX_COALESCED - 19, 20, 0), "one byte past the longest");
            assertFalse(off.sendsCoalesced(36, 20, 0), "opened without");
            assertFalse(wildcard.sendsCoalesced(36, 20, 0), "not a loopback address");
        }
    }

    /** A pair the link does not coalesce goes as sendPair does: two datagrams, the first first. */
    @Test
    void anUncoalescablePairGoesAsTwoDatagrams() throws IOException {
        final Random rnd = new Random(SEED + 2);
        final byte[] first = random(rnd, 20);
        final byte[] second = random(rnd, 36);   // longer than the first
        try (UdpLink tx = open("127.0.7.97", true); UdpLink rx = open("127.0.7.98", true)) {
            assertEquals(Link.FIRST_SENT | Link.SECOND_SENT,
                    tx.sendCoalesced(datagram(first), datagram(second), rx.localAddress(), 0));
            final RxBatch batch = new RxBatch(8, 4096);
            receive(rx, batch, 2);
            assertArrayEquals(first, bytes(batch, 0));
            assertArrayEquals(second, bytes(batch, 1));
            assertTrue(batch.address(1) != batch.address(0) + first.length, "two datagrams, apart");
            assertEquals(0, batch.segment(1));
        }
    }

    /**
     * Another sender's GSO datagram of five 100-byte segments into a batch with room for four: handed over whole (the
     * engine then drops it as malformed); a batch with room for one takes nothing, and the datagram stays waiting.
     */
    @Test
    void aCoalescedDatagramLongerThanTheRoomComesWhole() throws IOException {
        final Random rnd = new Random(SEED + 3);
        final byte[] five = random(rnd, 500);
        try (UdpLink tx = open("127.0.7.99", false); UdpLink rx = bySocket("127.0.7.100")) {
            sendGso(tx, five, 100, rx.localAddress());
            final RxBatch batch = new RxBatch(6, 4096);
            batch.add(1, null, 0);
            batch.add(1, null, 0);
            batch.add(1, null, 0);
            batch.add(1, null, 0);
            batch.add(1, null, 0);
            assertEquals(0, rx.receive(batch), "room for one, less than a pair: nothing taken");
            batch.clear();
            batch.add(1, null, 0);
            batch.add(1, null, 0);
            receive(rx, batch, 3);
            assertEquals(500, batch.length(2), "whole: five segments do not fit the room of four");
            assertArrayEquals(five, bytes(batch, 2));
            assertEquals(0, batch.segment(2));
        }
    }

    /**
     * A device on an interface (one socket per address): the pair leaves from the address asked for, and one that
     * comes back coalesced is split with the index of the address it arrived at.
     */
    @Test
    void aMultiAddressLinkCoalescesPerAddress() throws IOException {
        final Random rnd = new Random(SEED + 4);
        final byte[] first = random(rnd, 60);
        final byte[] second = random(rnd, 20);
        final List<InetSocketAddress> locals = List.of(new InetSocketAddress(InetAddress.getByName("127.0.7.103"), 0),
                new InetSocketAddress(InetAddress.getByName("127.0.7.104"), 0));
        try (MultiUdpLink multi = MultiUdpLink.open(locals, 1 << 20, true); UdpLink peer = open("127.0.7.105", true)) {
            assertTrue(multi.sendsCoalesced(60, 20, 1));
            assertEquals(Link.FIRST_SENT | Link.SECOND_SENT,
                    multi.sendCoalesced(datagram(first), datagram(second), peer.localAddress(), 1));
            final RxBatch in = new RxBatch(8, 4096);
            receive(peer, in, 2);
            assertEquals(multi.localAddresses().get(1), in.source(0), "from the address at index 1");
            assertEquals(1, in.segment(1));
            assertEquals(Link.FIRST_SENT | Link.SECOND_SENT, peer.sendCoalesced(datagram(first), datagram(second),
                    multi.localAddresses().get(1), 0));
            final RxBatch back = new RxBatch(8, 4096);
            for (int spins = 0; spins < 1_000_000 && back.count() < 2; spins++) {
                multi.receive(back);
            }
            assertEquals(2, back.count());
            assertArrayEquals(first, bytes(back, 0));
            assertArrayEquals(second, bytes(back, 1));
            assertEquals(1, back.receivedOn(0));
            assertEquals(1, back.receivedOn(1));
            assertEquals(1, back.segment(1));
        }
    }

    /**
     * So that a burst always fits, a link that takes datagrams whole asks for a quarter of its room
     * ({@link Link#MAX_BURST_SEGMENTS}): 6 waiting, room 8. Its first call, after none, takes one (recvmsg); the next
     * ones ask for 2.
     */
    @Test
    void aLinkThatTakesDatagramsWholeAsksForAQuarterOfItsRoom() throws IOException {
        try (UdpLink tx = open("127.0.7.101", false); UdpLink rx = bySocket("127.0.7.102")) {
            for (int i = 0; i < 6; i++) {
                assertTrue(tx.send(datagram(new byte[] {(byte) i}), rx.localAddress()));
            }
            final RxBatch batch = new RxBatch(8, 4096);
            assertEquals(1, rx.receive(batch), "the first call takes one");
            batch.clear();
            assertEquals(2, rx.receive(batch), "a quarter of the room");
            batch.clear();
            assertEquals(2, rx.receive(batch));
            batch.clear();
            assertEquals(1, rx.receive(batch));
            assertArrayEquals(new byte[] {5}, bytes(batch, 0), "in order, none lost");
        }
    }

    /**
     * The single receive after a quiet call takes a coalesced pair whole and splits it, as the batch does; the batch
     * call after it takes the pairs still waiting, and the call after one that found nothing takes one again.
     */
    @Test
    void aQuietLinkTakesOnePairThenBatchesTheRest() throws IOException {
        final Random rnd = new Random(SEED + 5);
        final byte[][] sent = new byte[8][];
        try (UdpLink tx = open("127.0.7.106", true); UdpLink rx = bySocket("127.0.7.107")) {
            for (int p = 0; p < 3; p++) {
                sent[2 * p] = random(rnd, 40 + rnd.nextInt(200));
                sent[2 * p + 1] = random(rnd, 20);
                assertEquals(Link.FIRST_SENT | Link.SECOND_SENT,
                        tx.sendCoalesced(datagram(sent[2 * p]), datagram(sent[2 * p + 1]), rx.localAddress(), 0));
            }
            final RxBatch batch = new RxBatch(16, 4096);
            assertEquals(2, rx.receive(batch), "one datagram: one pair, split");
            assertEquals(4, rx.receive(batch), "the two pairs still waiting, in one call");
            for (int i = 0; i < 6; i++) {
                assertArrayEquals(sent[i], bytes(batch, i), "segment " + i + ", seed " + SEED);
                assertEquals(i % 2, batch.segment(i));
                assertEquals(tx.localAddress(), batch.source(i));
            }
            assertEquals(0, rx.receive(batch), "nothing waiting");
            sent[6] = random(rnd, 64);
            sent[7] = random(rnd, 20);
            for (int k = 0; k < 2; k++) {
                assertEquals(Link.FIRST_SENT | Link.SECOND_SENT,
                        tx.sendCoalesced(datagram(sent[6]), datagram(sent[7]), rx.localAddress(), 0));
            }
            batch.clear();
            assertEquals(2, rx.receive(batch), "after a quiet call, one datagram again");
            assertEquals(2, rx.receive(batch));
            assertArrayEquals(sent[6], bytes(batch, 2));
            assertArrayEquals(sent[7], bytes(batch, 3));
        }
    }

    /** One GSO datagram of {@code bytes} in segments of {@code segment} bytes, by hand (Sendmmsg sends pairs). */
    static void sendGso(final UdpLink tx, final byte[] bytes, final int segment, final InetSocketAddress to) {
        final int fd = fd(tx);
        final ByteBuffer mem = BufferUtil.allocateDirectAligned(4096, 64);
        final UnsafeBuffer h = new UnsafeBuffer(mem);
        final long base = h.addressOffset();
        final int iov = 64;
        final int name = 96;
        final int cmsg = 128;
        final int data = 256;
        h.putBytes(data, bytes);
        h.putLong(Recvmmsg.MSG_NAME, base + name);
        h.putInt(Recvmmsg.MSG_NAMELEN, Sendmmsg.SOCKADDR_IN_SIZE);
        h.putLong(Recvmmsg.MSG_IOV, base + iov);
        h.putLong(Recvmmsg.MSG_IOVLEN, 1);
        h.putLong(Recvmmsg.MSG_CONTROL, base + cmsg);
        h.putLong(Recvmmsg.MSG_CONTROLLEN, Sendmmsg.SEGMENT_CMSG_SPACE);
        h.putLong(iov, base + data);
        h.putLong(iov + Recvmmsg.IOV_LEN, bytes.length);
        h.putShort(name, (short) Recvmmsg.AF_INET);
        h.putShort(name + Recvmmsg.SIN_PORT, (short) to.getPort(), java.nio.ByteOrder.BIG_ENDIAN);
        h.putBytes(name + Recvmmsg.SIN_ADDR, to.getAddress().getAddress());
        h.putLong(cmsg, Sendmmsg.SEGMENT_CMSG_LEN);
        h.putInt(cmsg + NativeSocket.CMSG_LEVEL, NativeSocket.SOL_UDP);
        h.putInt(cmsg + NativeSocket.CMSG_TYPE, NativeSocket.UDP_SEGMENT);
        h.putShort(cmsg + NativeSocket.CMSG_DATA, (short) segment);
        assertEquals(1, NativeSocket.sendmmsg(fd, base, 1, Recvmmsg.MSG_DONTWAIT), "the GSO datagram was sent");
        assertNotNull(mem);
    }

    private static int fd(final UdpLink link) {
        final int[] fds = new int[4];
        assertTrue(link.pollFds(fds) >= 1);
        return fds[0];
    }
}
