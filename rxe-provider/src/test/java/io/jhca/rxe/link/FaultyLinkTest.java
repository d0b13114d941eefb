package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

/** FaultyLink over an in-memory link: each fault does what it says, counted, and a seed reproduces a run. */
class FaultyLinkTest {

    /** A link whose sent datagrams come back on receive (from the peer they were sent to). */
    static final class Loop implements Link {
        final ArrayDeque<byte[]> queue = new ArrayDeque<>();
        final InetSocketAddress self = new InetSocketAddress("127.0.0.1", 4791);

        @Override
        public boolean send(final ByteBuffer d, final InetSocketAddress peer) {
            final byte[] b = new byte[d.remaining()];
            d.get(b);
            queue.add(b);
            return true;
        }

        @Override
        public InetSocketAddress receive(final ByteBuffer buffer) {
            final byte[] b = queue.poll();
            if (b == null) {
                return null;
            }
            buffer.put(b);
            return self;
        }

        @Override
        public InetSocketAddress localAddress() {
            return self;
        }

        @Override
        public void close() {
        }
    }

    private static List<Integer> roundTrip(final FaultyLink link, final int packets, final long waitNanos) {
        final ByteBuffer out = ByteBuffer.allocateDirect(64);
        for (int i = 0; i < packets; i++) {
            out.clear();
            out.putInt(i).putInt(0x01020304).flip();
            link.send(out, link.localAddress());
        }
        final List<Integer> got = new ArrayList<>();
        final ByteBuffer in = ByteBuffer.allocateDirect(64);
        final long end = System.nanoTime() + waitNanos;
        do {
            in.clear();
            while (link.receive(in) != null) {
                assertEquals(8, in.position());
                got.add(in.getInt(0) ^ (in.getInt(4) == 0x01020304 ? 0 : 0x40000000));
                in.clear();
            }
        } while (System.nanoTime() < end);
        return got;
    }

    /** Sends one 8-byte packet whose first byte is {@code opcode}. */
    private static void sendOpcode(final FaultyLink link, final int opcode) {
        final ByteBuffer out = ByteBuffer.allocateDirect(8);
        out.put((byte) opcode).put(new byte[7]).flip();
        link.send(out, link.localAddress());
    }

    private static void drain(final FaultyLink link) {
        final ByteBuffer in = ByteBuffer.allocateDirect(64);
        while (link.receive(in.clear()) != null) {
            in.clear();
        }
    }

    @Test
    void lostCountsEachDroppedOrCorruptedPacketByItsBthTransport() {
        // 0x64 UD SEND Only, 0x04 RC SEND Only, 0x24 UC SEND Only, 0x81 CNP; transport = opcode >>> 5
        final int[] opcodes = {0x64, 0x64, 0x04, 0x24, 0x64, 0x81};
        FaultyLink dropTx = new FaultyLink(new Loop(), LinkFaults.NONE.withDrop(1), LinkFaults.NONE, 1);
        FaultyLink corruptRx = new FaultyLink(new Loop(), LinkFaults.NONE, LinkFaults.NONE.withCorrupt(1), 1);
        FaultyLink clean = new FaultyLink(new Loop(), LinkFaults.NONE.withDuplicate(1).withReorder(1),
                LinkFaults.NONE, 1);
        for (final int op : opcodes) {
            sendOpcode(dropTx, op);
            sendOpcode(corruptRx, op);
            sendOpcode(clean, op);
        }
        drain(dropTx);
        drain(corruptRx);
        drain(clean);
        final int[] expected = {1, 1, 0, 3, 1, 0, 0, 0};   // RC, UC, RD, UD, CNP, 5..7
        for (int t = 0; t < 8; t++) {
            assertEquals(expected[t], dropTx.lost(FaultyLink.Direction.TX, t), "dropped on send, transport " + t);
            assertEquals(0, dropTx.lost(FaultyLink.Direction.RX, t), "nothing lost on receive, transport " + t);
            assertEquals(expected[t], corruptRx.lost(FaultyLink.Direction.RX, t), "corrupted on receive, transport " + t);
            assertEquals(0, corruptRx.lost(FaultyLink.Direction.TX, t));
            assertEquals(0, clean.lost(FaultyLink.Direction.TX, t) + clean.lost(FaultyLink.Direction.RX, t),
                    "duplicated and reordered packets are not lost, transport " + t);
        }
    }

    @Test
    void dropDuplicateCorrupt() {
        FaultyLink l = new FaultyLink(new Loop(), LinkFaults.NONE.withDrop(1), LinkFaults.NONE, 1);
        assertEquals(List.of(), roundTrip(l, 10, 0));
        assertEquals(10, l.counter(FaultyLink.Direction.TX, FaultyLink.Fault.DROPPED));

        l = new FaultyLink(new Loop(), LinkFaults.NONE, LinkFaults.NONE.withDuplicate(1), 1);
        assertEquals(List.of(0, 0, 1, 1, 2, 2), roundTrip(l, 3, 0));
        assertEquals(3, l.counter(FaultyLink.Direction.RX, FaultyLink.Fault.DUPLICATED));

        l = new FaultyLink(new Loop(), LinkFaults.NONE.withCorrupt(1), LinkFaults.NONE, 1);
        final ByteBuffer out = ByteBuffer.allocateDirect(8);
        final ByteBuffer in = ByteBuffer.allocateDirect(64);
        for (long i = 0; i < 200; i++) {
            out.clear();
            out.putLong(i * 0x9E3779B97F4A7C15L).flip();
            l.send(out, l.localAddress());
            in.clear();
            l.receive(in);
            assertEquals(8, in.position());
            assertEquals(1, Long.bitCount(in.getLong(0) ^ i * 0x9E3779B97F4A7C15L), "exactly one bit flipped");
        }
        assertEquals(200, l.counter(FaultyLink.Direction.TX, FaultyLink.Fault.CORRUPTED));
    }

    @Test
    void reorderAndDelay() {
        FaultyLink l = new FaultyLink(new Loop(), LinkFaults.NONE, new LinkFaults(0, 0, 0.5, 0, 0, 50_000_000L), 3);
        final List<Integer> got = roundTrip(l, 40, 100_000_000L);
        assertEquals(40, got.size(), "reordered packets are delivered, late");
        assertTrue(l.counter(FaultyLink.Direction.RX, FaultyLink.Fault.REORDERED) > 0);
        boolean outOfOrder = false;
        for (int i = 1; i < got.size(); i++) {
            outOfOrder |= got.get(i) < got.get(i - 1);
        }
        assertTrue(outOfOrder);

        l = new FaultyLink(new Loop(), LinkFaults.NONE.withDelay(1, 30_000_000L), LinkFaults.NONE, 3);
        final long t0 = System.nanoTime();
        final ByteBuffer b = ByteBuffer.allocateDirect(8).putInt(7).putInt(0x01020304).flip();
        l.send(b, l.localAddress());
        final ByteBuffer in = ByteBuffer.allocateDirect(64);
        assertNull(l.receive(in), "held back");
        while (l.receive(in) == null) {
            Thread.onSpinWait();
        }
        assertTrue(System.nanoTime() - t0 >= 30_000_000L);
        assertEquals(7, in.getInt(0));
    }

    @Test
    void sameSeedSameFaults() {
        // timing-free faults: the same seed gives the same packets (held packets depend on the clock)
        final LinkFaults f = new LinkFaults(0.1, 0.1, 0, 0, 0.1, 1_000_000L);
        final List<Integer> a = roundTrip(new FaultyLink(new Loop(), f, f, 42), 500, 0);
        final List<Integer> b = roundTrip(new FaultyLink(new Loop(), f, f, 42), 500, 0);
        final List<Integer> c = roundTrip(new FaultyLink(new Loop(), f, f, 43), 500, 0);
        assertEquals(a, b);
        assertTrue(!a.equals(c), "another seed, other faults");
    }
}
