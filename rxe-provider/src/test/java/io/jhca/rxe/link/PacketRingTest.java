package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import jnr.ffi.LibraryLoader;

/**
 * A loopback link that receives from its packet ring: it says so, where the process has CAP_NET_RAW; only datagrams
 * to its own address and port reach it, never its own sends; a foreign coalesced datagram waits for the room its
 * segments need and then comes split, one of more segments than a batch holds is dropped and counted; frames whose
 * IPv4 or UDP headers do not add up (injected on the loopback interface by a packet socket of the test's own) are
 * dropped and counted, one with IPv4 options is taken at its payload, and the next good frame arrives with its exact
 * bytes and sender.
 */
class PacketRingTest {

    /** Payloads: printed, and replayed with -Djhca.ring.seed=N. */
    private static final long SEED = Long.getLong("jhca.ring.seed", new java.security.SecureRandom().nextLong());

    static {
        System.out.println("PacketRingTest: seed " + SEED + "; replay with -Djhca.ring.seed=" + SEED);
    }

    /** CAP_NET_RAW (bit 13 of CapEff in /proc/self/status): without it no link has a ring, and these tests skip. */
    static boolean netRaw() {
        try {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("CapEff:")) {
                    return (Long.parseUnsignedLong(line.substring(7).trim(), 16) & (1L << 13)) != 0;
                }
            }
        } catch (final IOException | RuntimeException e) {
            return false;
        }
        return false;
    }

    /** A link on {@code address} that must receive from its ring (skips the test without CAP_NET_RAW). */
    private static UdpLink ringLink(final String address) throws IOException {
        assumeTrue(netRaw(), "no CAP_NET_RAW: links receive by their sockets");
        final UdpLink link = UdpLink.open(new InetSocketAddress(InetAddress.getByName(address), 0), 1 << 20, true, true);
        assertEquals("packet ring", link.receivePath(), "with CAP_NET_RAW on this kernel");
        return link;
    }

    private static UdpLink plainLink(final String address) throws IOException {
        return UdpLink.open(new InetSocketAddress(InetAddress.getByName(address), 0), 1 << 20, false, false);
    }

    private static byte[] bytes(final RxBatch batch, final int i) {
        final byte[] out = new byte[batch.length(i)];
        new UnsafeBuffer(batch.address(i), batch.length(i)).getBytes(0, out);
        return out;
    }

    private static ByteBuffer datagram(final byte[] b) {
        return ByteBuffer.allocateDirect(b.length).put(b).flip();
    }

    private static void receive(final Link link, final RxBatch batch, final int n) {
        for (int spins = 0; spins < 1_000_000 && batch.count() < n; spins++) {
            link.receive(batch);
        }
        assertEquals(n, batch.count(), "entries received");
    }

    /** Looks a while longer: nothing more arrives. */
    private static void nothingMore(final Link link) {
        final RxBatch more = new RxBatch(4, 4096);
        for (int spins = 0; spins < 20_000; spins++) {
            link.receive(more);
        }
        assertEquals(0, more.count(), "nothing else reached the ring");
    }

    @Test
    void aLinkSaysHowItReceives() throws IOException {
        try (UdpLink asked = UdpLink.open(new InetSocketAddress(InetAddress.getByName("127.0.8.1"), 0), 1 << 20, true,
                false); UdpLink plain = plainLink("127.0.8.2")) {
            assertEquals("socket (the packet ring was not asked for)", asked.receivePath());
            assertEquals("socket", plain.receivePath(), "a link that takes datagrams one at a time");
        }
        try (UdpLink ring = ringLink("127.0.8.3")) {
            assertEquals(0, ring.ringDrops());
        }
    }

    @Test
    void onlyDatagramsToItsOwnAddressAndPortReachTheRing() throws IOException {
        final Random rnd = new Random(SEED);
        try (UdpLink rx = ringLink("127.0.8.11");
             DatagramChannel samePortElsewhere = DatagramChannel.open(StandardProtocolFamily.INET);
             DatagramChannel otherPort = DatagramChannel.open(StandardProtocolFamily.INET);
             UdpLink tx = plainLink("127.0.8.13")) {
            samePortElsewhere.bind(new InetSocketAddress(InetAddress.getByName("127.0.8.12"), rx.localAddress().getPort()));
            otherPort.bind(new InetSocketAddress(rx.localAddress().getAddress(), 0));
            final byte[] mine = new byte[1 + rnd.nextInt(1400)];
            rnd.nextBytes(mine);
            assertTrue(tx.send(datagram(new byte[] {1, 2, 3}), (InetSocketAddress) samePortElsewhere.getLocalAddress()));
            assertTrue(tx.send(datagram(new byte[] {4, 5}), (InetSocketAddress) otherPort.getLocalAddress()));
            assertTrue(rx.send(datagram(new byte[] {6}), tx.localAddress()), "its own send, which it must not see");
            assertTrue(tx.send(datagram(mine), rx.localAddress()));
            final RxBatch batch = new RxBatch(8, 4096);
            receive(rx, batch, 1);
            assertArrayEquals(mine, bytes(batch, 0), "seed " + SEED);
            assertEquals(tx.localAddress(), batch.source(0));
            assertEquals(0, batch.segment(0));
            nothingMore(rx);
            assertNotNull(samePortElsewhere.receive(ByteBuffer.allocate(16)), "the others still get theirs");
        }
    }

    @Test
    void aForeignCoalescedDatagramWaitsForRoomThenComesSplit() throws IOException {
        final Random rnd = new Random(SEED + 1);
        final byte[] five = new byte[450];
        rnd.nextBytes(five);
        try (UdpLink tx = plainLink("127.0.8.21"); UdpLink rx = ringLink("127.0.8.22")) {
            UdpLinkCoalescedSendTest.sendGso(tx, five, 100, rx.localAddress());
            final RxBatch batch = new RxBatch(6, 4096);
            batch.add(1, null, 0);
            batch.add(1, null, 0);
            for (int spins = 0; spins < 10_000; spins++) {
                assertEquals(0, rx.receive(batch), "room for four, five segments: nothing taken yet");
            }
            batch.clear();
            receive(rx, batch, 5);
            for (int i = 0; i < 5; i++) {
                final int length = i < 4 ? 100 : 50;
                assertEquals(length, batch.length(i));
                assertEquals(i, batch.segment(i), "numbered as the kernel numbers their IPv4 IDs");
                final byte[] expected = new byte[length];
                System.arraycopy(five, 100 * i, expected, 0, length);
                assertArrayEquals(expected, bytes(batch, i));
            }
            assertEquals(0, rx.ringDrops());
        }
    }

    @Test
    void aCoalescedDatagramOfMoreSegmentsThanTheBatchHoldsIsDroppedAndCounted() throws IOException {
        try (UdpLink tx = plainLink("127.0.8.31"); UdpLink rx = ringLink("127.0.8.32")) {
            UdpLinkCoalescedSendTest.sendGso(tx, new byte[9 * 40], 40, rx.localAddress());
            final byte[] next = {9, 8, 7};
            assertTrue(tx.send(datagram(next), rx.localAddress()));
            final RxBatch batch = new RxBatch(8, 4096);
            receive(rx, batch, 1);
            assertArrayEquals(next, bytes(batch, 0), "the datagram after it");
            assertEquals(1, rx.ringDrops(), "nine segments, a batch of eight");
        }
    }

    /**
     * The longest datagram a frame holds whole, and one byte more: af_packet.c's tpacket_rcv puts the link header of
     * a SOCK_RAW frame at TPACKET_ALIGN(tpacket2_hdr + sockaddr_ll + 16) + virtio_net_hdr - 14 = 76 bytes in, so a
     * 16 KiB frame holds 16,308 bytes of frame, 16,266 of UDP payload. One past it the ring keeps a cut frame, handed over as
     * a full slot (as a socket receive cuts a datagram longer than its slot), which the engine counts as oversize.
     */
    @Test
    void theLongestDatagramAFrameHoldsComesWholeAndOneMoreComesAsAFullSlot() throws IOException {
        final int longest = PacketRing.FRAME_SIZE - 76 - 14 - 28;
        final Random rnd = new Random(SEED + 3);
        try (UdpLink tx = plainLink("127.0.8.51"); UdpLink rx = ringLink("127.0.8.52")) {
            final byte[] fits = new byte[longest];
            rnd.nextBytes(fits);
            assertTrue(tx.send(datagram(fits), rx.localAddress()));
            final RxBatch batch = new RxBatch(4, 16 * 1024);
            receive(rx, batch, 1);
            assertArrayEquals(fits, bytes(batch, 0), "seed " + SEED);
            assertTrue(tx.send(datagram(new byte[longest + 1]), rx.localAddress()));
            batch.clear();
            receive(rx, batch, 1);
            assertEquals(batch.slotSize(), batch.length(0), "cut: a full slot");
            assertEquals(tx.localAddress(), batch.source(0));
            assertEquals(0, rx.ringDrops());
        }
    }

    /**
     * Entries point into the ring's frames: they stay valid while the caller keeps receiving into the same batch
     * without clearing it, even as more frames come; once the batch is handled every frame goes back, so a sleep's
     * poll(2) waits for the next datagram instead of calling the socket readable at once.
     */
    @Test
    void framesAreHeldWhileTheirEntriesAreReadAndGivenBackOnceHandled() throws IOException {
        final Random rnd = new Random(SEED + 4);
        try (UdpLink tx = plainLink("127.0.8.61"); UdpLink rx = ringLink("127.0.8.62");
             KernelWait wait = KernelWait.open()) {
            final RxBatch batch = new RxBatch(8, 4096);
            final byte[][] sent = new byte[8][];
            for (int i = 0; i < sent.length; i++) {
                sent[i] = new byte[1 + rnd.nextInt(1000)];
                rnd.nextBytes(sent[i]);
                assertTrue(tx.send(datagram(sent[i]), rx.localAddress()));
                receive(rx, batch, i + 1);   // one receive each, into the same batch
            }
            for (int i = 0; i < sent.length; i++) {
                assertArrayEquals(sent[i], bytes(batch, i), "entry " + i + " still reads its datagram, seed " + SEED);
                assertEquals(sent[i].length, batch.bytesToSlotEnd(i), "readable to its end, not past it");
            }
            batch.clear();
            rx.handled();   // as the engine says after handling a batch, under its lock
            assertTrue(!wait.await(rx, 2_000_000), "nothing new: the sleep lasts its time");
            assertTrue(tx.send(datagram(sent[0]), rx.localAddress()));
            assertTrue(wait.await(rx, 10_000_000_000L), "a datagram ends the sleep");
            receive(rx, batch, 1);
            assertArrayEquals(sent[0], bytes(batch, 0));
            rx.handled();
            assertTrue(!wait.await(rx, 2_000_000), "handled: the sleep lasts its time again");
        }
    }

    @Test
    void anEntryOutsideTheSlotsMustFitWhatMayBeRead() {
        final RxBatch batch = new RxBatch(2, 4096);
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> batch.addExternal(4096, 10, 9, 0, null, 0), "readable less than its length");
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> batch.addExternal(4096, 10, 4096, 0, null, 0), "a full slot readable: reads as cut");
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> batch.addExternal(4096, -1, 10, 0, null, 0));
        assertEquals(0, batch.count(), "nothing recorded");
        batch.addExternal(4096, 10, 4095, 1, null, 0);
        assertEquals(4095, batch.bytesToSlotEnd(0));
        assertEquals(10, batch.length(0));
        assertEquals(1, batch.segment(0));
        batch.add(7, null, 0);
        assertEquals(4096, batch.bytesToSlotEnd(1), "a slot's entry reads to its slot's end");
    }

    /**
     * send(2), which the ring's own binding ({@link PacketRing.Calls}) has no use for: the test's packet socket puts
     * frames on the loopback interface with it.
     */
    public interface Inject {
        long send(int fd, long buf, long len, int flags);
    }

    @Test
    void framesWhoseHeadersDoNotAddUpAreDroppedAndCountedAndTheNextIsTaken() throws IOException {
        final Random rnd = new Random(SEED + 2);
        try (UdpLink rx = ringLink("127.0.8.41")) {
            final Inject c = LibraryLoader.create(Inject.class).load("c");
            final PacketRing.Calls calls = PacketRing.calls();
            final int fd = calls.socket(PacketRing.AF_PACKET, PacketRing.SOCK_RAW, 0);
            assertTrue(fd >= 0, "a packet socket to inject with");
            final UnsafeBuffer b = new UnsafeBuffer(BufferUtil.allocateDirectAligned(4096, 64));
            try {
                b.putShort(0, (short) PacketRing.AF_PACKET);
                b.putShort(PacketRing.SLL_PROTOCOL, (short) PacketRing.ETH_P_IP, ByteOrder.BIG_ENDIAN);
                b.putInt(PacketRing.SLL_IFINDEX, loopbackIndex());
                assertEquals(0, calls.bind(fd, b.addressOffset(), PacketRing.SOCKADDR_LL_SIZE));
                final int port = rx.localAddress().getPort();
                final byte[] payload = new byte[1 + rnd.nextInt(300)];
                rnd.nextBytes(payload);
                // IPv4 total length one past the frame's bytes
                inject(c, fd, b, frame(5, 4, payload, port, +1, payload.length));
                // total length shorter than its own headers
                inject(c, fd, b, frame(5, 4, payload, port, -(payload.length + 1), payload.length));
                // version 6 in an IPv4 frame
                inject(c, fd, b, frame(5, 6, payload, port, 0, payload.length));
                // cut inside the UDP header: its ports there (the filter reads the destination), its length not
                inject(c, fd, b, frame(5, 4, payload, port, 0, -4));
                // with 4 bytes of IPv4 options: good, its payload after them
                inject(c, fd, b, frame(6, 4, payload, port, 0, payload.length));
                final RxBatch batch = new RxBatch(8, 4096);
                receive(rx, batch, 1);
                assertArrayEquals(payload, bytes(batch, 0), "seed " + SEED);
                assertEquals(new InetSocketAddress(InetAddress.getByName("127.0.8.49"), 4791), batch.source(0));
                assertEquals(4, rx.ringDrops(), "the four that do not add up");
                final byte[] last = {42};
                inject(c, fd, b, frame(5, 4, last, port, 0, last.length, 0xfffe));
                batch.clear();
                receive(rx, batch, 1);
                assertArrayEquals(last, bytes(batch, 0));
                assertEquals(0, batch.segment(0), "came alone: segment 0, whatever its IPv4 ID (as from a socket)");
                nothingMore(rx);
                assertEquals(4, rx.ringDrops());
            } finally {
                calls.close(fd);
            }
        }
    }

    /**
     * An Ethernet frame (loopback's link header) with an IPv4 header of {@code ihl} words, {@code version}, from
     * 127.0.8.49:4791 to 127.0.8.41:{@code port}, DF set; the IPv4 total length is the true one plus {@code
     * totalSkew}; the frame ends {@code keep} bytes into the payload (negative: that many bytes before it).
     */
    private static byte[] frame(final int ihl, final int version, final byte[] payload, final int port,
            final int totalSkew, final int keep) {
        return frame(ihl, version, payload, port, totalSkew, keep, 0);
    }

    /** {@link #frame(int, int, byte[], int, int, int)} with IPv4 Identification {@code id}. */
    private static byte[] frame(final int ihl, final int version, final byte[] payload, final int port,
            final int totalSkew, final int keep, final int id) {
        final int ipLength = ihl * 4;
        final int total = ipLength + 8 + payload.length;
        final ByteBuffer f = ByteBuffer.allocate(14 + total).order(ByteOrder.BIG_ENDIAN);
        f.position(12);
        f.putShort((short) PacketRing.ETH_P_IP);
        f.put((byte) (version << 4 | ihl)).put((byte) 0).putShort((short) (total + totalSkew));
        f.putShort((short) id).putShort((short) 0x4000).put((byte) 64).put((byte) 17).putShort((short) 0);
        f.put(new byte[] {127, 0, 8, 49}).put(new byte[] {127, 0, 8, 41});
        f.position(14 + ipLength);
        f.putShort((short) 4791).putShort((short) port).putShort((short) (8 + payload.length)).putShort((short) 0);
        f.put(payload);
        final byte[] all = f.array();
        final int end = 14 + ipLength + 8 + keep;
        return java.util.Arrays.copyOf(all, end);
    }

    private static void inject(final Inject c, final int fd, final UnsafeBuffer b, final byte[] frame) {
        b.putBytes(1024, frame);
        assertEquals(frame.length, c.send(fd, b.addressOffset() + 1024, frame.length, 0), "the frame was sent");
    }

    private static int loopbackIndex() throws IOException {
        for (final NetworkInterface ni : java.util.Collections.list(NetworkInterface.getNetworkInterfaces())) {
            if (ni.isLoopback() && ni.isUp()) {
                return ni.getIndex();
            }
        }
        throw new AssertionError("no loopback interface");
    }
}
