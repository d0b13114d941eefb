package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.jhca.rxe.link.Link;
import io.jhca.rxe.link.RxBatch;
import io.jhca.rxe.link.UdpLink;
import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpType;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * A loopback device sends the packets of an RC message that one pass emits as GSO bursts ({@link Link#sendBurst}):
 * segments of the first packet's length, the last no longer, at most {@link Link#MAX_BURST_SEGMENTS} and the link's
 * {@link Link#maxBurst} bytes. The sender's link is wrapped to record every call; the receiver takes the bursts whole
 * from its packet ring or its socket (both cases) and splits them. Bytes arrive exact, completions succeed, nothing is
 * resent. UC never bursts (a refused burst would be lost for good). Seed printed; replay with -Djhca.burst.seed.
 */
@Timeout(30)
class BurstTest {
    private static final long SEED = Long.getLong("jhca.burst.seed", System.nanoTime());

    static {
        System.out.println("BurstTest seed " + SEED + " (replay: -Djhca.burst.seed=" + SEED + ")");
    }

    /**
     * 64 KiB at a 4 KiB MTU: WRITE_FIRST (BTH, RETH, 4096, ICRC: 4128 B) then 15 packets of 4112 B. A shorter
     * packet ends a burst, and three fill one (12,800 B at most): [F, M], four times [M, M, M], [M, L].
     */
    @ParameterizedTest(name = "receiver ring={0}")
    @ValueSource(booleans = {true, false})
    void aLongWriteLeavesInBurstsAndArrivesWhole(final boolean ring) {
        final List<int[]> calls = new ArrayList<>();
        try (Rig r = rig(QpType.RC, Mtu.MTU_4096, ring, calls)) {
            final byte[] data = random(65536, 1);
            r.memA.buffer().putBytes(0, data);
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, data.length).rdma(r.mrB.address() + 65536, r.mrB.rkey()));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            assertArrayEquals(data, bytes(r.memB, 65536, data.length), "seed " + SEED);
            final List<int[]> data4k = calls;   // A only requests: its link sends no ACK here
            assertEquals(6, data4k.size(), "bursts: " + describe(calls));
            assertEquals(List.of(2, 3, 3, 3, 3, 2), data4k.stream().map(c -> c[0]).toList(), describe(calls));
            assertEquals(4128, data4k.get(0)[1], "segment size of the first: WRITE_FIRST's length");
            assertEquals(4128 + 4112, data4k.get(0)[2]);
            for (int i = 1; i < 6; i++) {
                assertEquals(4112, data4k.get(i)[1]);
                assertEquals(4112 * data4k.get(i)[0], data4k.get(i)[2]);
            }
            assertEquals(16, ((RxeQp) r.qpA).counters().get(Counter.SENT_PKTS), "every packet counted once");
            assertEquals(0, ((RxeQp) r.qpA).counters().get(Counter.RETRANSMITTED_PKTS));
            assertEquals(0, r.b.counters().get(Counter.DROP_OVERSIZE));
            icrcInFull(r);
        }
    }

    /**
     * A SEND of 4 x 1024 + 1 bytes at a 1 KiB MTU: four packets of equal length fill a burst ({@link
     * Link#MAX_BURST_SEGMENTS}), the fifth (one byte) leaves alone. The receiver's buffer gets every byte, the one past
     * the message untouched.
     */
    @ParameterizedTest(name = "receiver ring={0}")
    @ValueSource(booleans = {true, false})
    void aBurstHoldsAtMostFourSegments(final boolean ring) {
        final List<int[]> calls = new ArrayList<>();
        try (Rig r = rig(QpType.RC, Mtu.MTU_1024, ring, calls)) {
            final int length = 4 * 1024 + 1;
            final byte[] data = random(length, 2);
            r.memA.buffer().putBytes(0, data);
            r.memB.buffer().setMemory(0, length + 1, (byte) 0x5A);
            r.qpB.postRecv(new RecvWr().wrId(9).sge(r.mrB, 0, 8192));
            r.qpA.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, length));
            r.expect(r.cqA, 2, WcStatus.SUCCESS);
            r.expect(r.cqB, 9, WcStatus.SUCCESS);
            assertArrayEquals(data, bytes(r.memB, 0, length), "seed " + SEED);
            assertEquals((byte) 0x5A, r.memB.buffer().getByte(length), "one past the message");
            final List<int[]> sends = calls;   // A only requests: its link sends no ACK here
            assertEquals(2, sends.size(), describe(calls));
            assertEquals(Link.MAX_BURST_SEGMENTS, sends.get(0)[0]);
            assertEquals(1, sends.get(1)[0], "the last packet alone");
            icrcInFull(r);
        }
    }

    /** UC has no retransmission to recover a refused burst: its packets leave one datagram each. */
    @ParameterizedTest(name = "receiver ring={0}")
    @ValueSource(booleans = {true})
    void ucNeverBursts(final boolean ring) {
        final List<int[]> calls = new ArrayList<>();
        try (Rig r = rig(QpType.UC, Mtu.MTU_4096, ring, calls)) {
            final byte[] data = random(32768, 3);
            r.memA.buffer().putBytes(0, data);
            r.qpA.postSend(new SendWr().wrId(3).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, data.length).rdma(r.mrB.address() + 65536, r.mrB.rkey()));
            r.expect(r.cqA, 3, WcStatus.SUCCESS);
            final long deadline = System.nanoTime() + 5_000_000_000L;
            while (r.b.counters().get(Counter.RCVD_PKTS) < 8 && System.nanoTime() < deadline) {
                r.progress();
            }
            assertArrayEquals(data, bytes(r.memB, 65536, data.length), "seed " + SEED);
            assertEquals(8, calls.size(), describe(calls));
            calls.forEach(c -> assertEquals(1, c[0], "one datagram each: " + describe(calls)));
        }
    }

    private static Rig rig(final QpType type, final Mtu mtu, final boolean ring, final List<int[]> calls) {
        final RxeDeviceConfig a = Rig.config("bA", ProgressMode.CALLER)
                .link(local -> new Recording(UdpLink.open(local, UdpLink.DEFAULT_SOCKET_BUFFER, true, false), calls))
                .build();
        final RxeDeviceConfig b = Rig.config("bB", ProgressMode.CALLER).ring(ring).build();
        return new Rig(a, b, type, 1 << 18, mtu, UnaryOperator.identity());
    }

    /**
     * Every packet B took passed its ICRC check in full, with segment i's IPv4 ID taken as i (what the kernel gives it
     * when it splits the burst), none by solving for an ID.
     */
    private static void icrcInFull(final Rig r) {
        final io.jhca.rxe.transport.RxeCounters c = r.b.counters();
        assertEquals(c.get(Counter.RCVD_PKTS), c.get(Counter.ICRC_CHECKED_FULL), c::toString);
        assertEquals(0, c.get(Counter.ICRC_RECOVERED_ID), c::toString);
        assertEquals(0, c.get(Counter.DROP_BAD_ICRC), c::toString);
    }

    private static byte[] random(final int n, final int salt) {
        final byte[] b = new byte[n];
        new Random(SEED + salt).nextBytes(b);
        return b;
    }

    private static byte[] bytes(final io.jhca.memory.DmaRegion mem, final int at, final int n) {
        final byte[] b = new byte[n];
        mem.buffer().getBytes(at, b);
        return b;
    }

    private static String describe(final List<int[]> calls) {
        final StringBuilder s = new StringBuilder();
        for (final int[] c : calls) {
            s.append(" [").append(c[0]).append(" x ").append(c[1]).append(" = ").append(c[2]).append(']');
        }
        return s.toString();
    }

    /** A device's link whose sends are recorded as {segments, segment size, bytes}: one per datagram handed over. */
    private static final class Recording implements Link {
        private final UdpLink link;
        private final List<int[]> calls;

        Recording(final UdpLink link, final List<int[]> calls) {
            this.link = link;
            this.calls = calls;
        }

        @Override
        public boolean send(final ByteBuffer datagram, final InetSocketAddress peer) {
            calls.add(new int[] {1, datagram.remaining(), datagram.remaining()});
            return link.send(datagram, peer);
        }

        @Override
        public int sendPair(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer,
                final int from) {
            calls.add(new int[] {1, first.remaining(), first.remaining()});
            calls.add(new int[] {1, second.remaining(), second.remaining()});
            return link.sendPair(first, second, peer, from);
        }

        @Override
        public boolean sendsCoalesced(final int firstLength, final int secondLength, final int from) {
            return link.sendsCoalesced(firstLength, secondLength, from);
        }

        @Override
        public int sendCoalesced(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer,
                final int from) {
            calls.add(new int[] {2, first.remaining(), first.remaining() + second.remaining()});
            return link.sendCoalesced(first, second, peer, from);
        }

        @Override
        public int maxBurst(final int from) {
            return link.maxBurst(from);
        }

        @Override
        public boolean sendBurst(final ByteBuffer burst, final int segmentSize, final InetSocketAddress peer,
                final int from) {
            calls.add(new int[] {(burst.remaining() + segmentSize - 1) / segmentSize, segmentSize, burst.remaining()});
            return link.sendBurst(burst, segmentSize, peer, from);
        }

        @Override
        public InetSocketAddress receive(final ByteBuffer buffer) {
            return link.receive(buffer);
        }

        @Override
        public int receive(final RxBatch batch) {
            return link.receive(batch);
        }

        @Override
        public void handled() {
            link.handled();
        }

        @Override
        public int pollFds(final int[] into) {
            return link.pollFds(into);
        }

        @Override
        public InetSocketAddress localAddress() {
            return link.localAddress();
        }

        @Override
        public void joinGroup(final InetAddress group) {
            link.joinGroup(group);
        }

        @Override
        public void leaveGroup(final InetAddress group) {
            link.leaveGroup(group);
        }

        @Override
        public InetSocketAddress receiveGroup(final ByteBuffer buffer) {
            return link.receiveGroup(buffer);
        }

        @Override
        public InetAddress lastGroup() {
            return link.lastGroup();
        }

        @Override
        public void close() {
            link.close();
        }
    }
}
