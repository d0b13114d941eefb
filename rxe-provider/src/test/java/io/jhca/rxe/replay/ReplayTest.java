package io.jhca.rxe.replay;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.rxe.wire.Ipv4IdMode;

/**
 * Packets Linux rxe sent as the requester in the interop VM (src/test/resources/replay/README.txt says how each
 * fixture was made), replayed into a jhca rxe device in the responder's place: jhca must answer exactly as it did
 * in the real run (same opcodes, PSNs, AETHs, payloads and so ICRCs), accept every packet's Linux-computed ICRC
 * with the IPv4 ID recovered, and leave its memory as the requests wrote it.
 */
class ReplayTest {

    private static Replay replay(final String fixture) throws Exception {
        final Replay r = new Replay(Capture.load(fixture), Ipv4IdMode.AUTO);
        try {
            r.run();
            r.checkResponses();
            r.checkCounters();
            r.checkMemory();
            return r;
        } catch (final Throwable t) {
            // unmap the fixed VA even so: the next test of the same fixture needs it
            try {
                r.close();
            } catch (final Throwable c) {
                t.addSuppressed(c);
            }
            throw t;
        }
    }

    /** The requester's messages of {@code opcode family} reassembled from the capture, in order. */
    private static List<byte[]> requesterMessages(final Capture cap, final int first, final int only, final int last) {
        final List<byte[]> out = new ArrayList<>();
        ByteBuffer cur = null;
        for (final ClassicPcap.IpPacket p : cap.roce) {
            if (!cap.fromRequester(p)) {
                continue;
            }
            final int op = Roce.opcode(p.payload);
            if (op == first || op == only) {
                cur = ByteBuffer.allocate(1 << 16);
            }
            if (cur != null && op >= first && op <= only) {
                cur.put(Roce.payload(p.payload));
                if (op == only || op == last) {
                    final byte[] m = new byte[cur.position()];
                    cur.flip().get(m);
                    out.add(m);
                    cur = null;
                }
            }
        }
        return out;
    }

    private static int count(final Capture cap, final boolean requester, final int opcode) {
        int n = 0;
        for (final ClassicPcap.IpPacket p : cap.roce) {
            if (cap.fromRequester(p) == requester && Roce.opcode(p.payload) == opcode) {
                n++;
            }
        }
        return n;
    }

    @Test
    void sendsOfIbvRcPingpongAreAckedAndReceived() throws Exception {
        try (Replay r = replay("send-rc-pingpong.pcap")) {
            final List<byte[]> sent = requesterMessages(r.cap, Roce.SEND_FIRST, Roce.SEND_ONLY, Roce.SEND_LAST);
            assertEquals(1, sent.size());
            assertEquals(4096, sent.get(0).length);
            assertEquals(sent.size(), r.receivedMessages.size(), "receive completions");
            for (int i = 0; i < sent.size(); i++) {
                assertArrayEquals(sent.get(i), r.receivedMessages.get(i), "received message " + i);
            }
            assertEquals(1, count(r.cap, false, Roce.ACKNOWLEDGE), "one coalesced ACK for the 4-packet SEND");
        }
    }

    @Test
    void sendsOfIbSendLatAreAckedAndReceived() throws Exception {
        try (Replay r = replay("send-lat.pcap")) {
            final List<byte[]> sent = requesterMessages(r.cap, Roce.SEND_FIRST, Roce.SEND_ONLY, Roce.SEND_LAST);
            assertEquals(5, sent.size());
            assertEquals(sent.size(), r.receivedMessages.size(), "receive completions");
            for (int i = 0; i < sent.size(); i++) {
                assertArrayEquals(sent.get(i), r.receivedMessages.get(i), "received message " + i);
            }
            assertEquals(5, count(r.cap, false, Roce.ACKNOWLEDGE));
            assertEquals(5, count(r.cap, false, Roce.SEND_ONLY), "jhca's own SENDs, posted like in the capture");
        }
    }

    @Test
    void rdmaWritesOfIbWriteLatLandAtTheAnnouncedVa() throws Exception {
        try (Replay r = replay("write-lat.pcap")) {
            assertEquals(5, count(r.cap, true, Roce.WRITE_ONLY));
            assertEquals(5, count(r.cap, false, Roce.ACKNOWLEDGE));
            final List<byte[]> writes = requesterMessages(r.cap, Roce.WRITE_FIRST, Roce.WRITE_ONLY, Roce.WRITE_LAST);
            final byte[] last = writes.get(writes.size() - 1);
            final byte[] model = r.model();
            for (int i = 0; i < last.length; i++) {
                assertEquals(last[i], model[i], "byte " + i + " of the buffer after the last WRITE");
            }
        }
    }

    @Test
    void rdmaReadsOfIbReadLatAreAnsweredFromTheAnnouncedVa() throws Exception {
        try (Replay r = replay("read-lat.pcap")) {
            assertEquals(5, count(r.cap, true, Roce.READ_REQUEST));
            assertEquals(5, count(r.cap, false, Roce.READ_RESPONSE_ONLY));
        }
    }

    @Test
    void atomicsOfIbAtomicLatReturnTheOriginalValues() throws Exception {
        try (Replay r = replay("atomic-lat.pcap")) {
            final int n = count(r.cap, true, Roce.FETCH_ADD);
            assertEquals(5, n);
            assertEquals(n, count(r.cap, false, Roce.ATOMIC_ACKNOWLEDGE));
            // each ACK's original value is the previous one plus the add: the memory really changed in between
            long sum = 0;
            Long first = null;
            for (final ClassicPcap.IpPacket p : r.cap.roce) {
                if (r.cap.fromRequester(p)) {
                    sum += Roce.swapAdd(p.payload);
                } else if (first == null) {
                    first = Roce.originalValue(p.payload);
                }
            }
            final long now = ByteBuffer.wrap(r.model()).order(ByteOrder.nativeOrder()).getLong(0);
            assertEquals(first + sum, now, "the buffer after the fetch-and-adds");
            assertTrue(sum != 0, "the adds change the value");
        }
    }

    @Test
    void strictIcrcModeDropsEveryLinuxPacket() throws Exception {
        // Linux rxe sends IPv4 IDs other than 0 and its ICRC covers them: strict mode (ID 0 only) must drop all
        try (Replay r = new Replay(Capture.load("read-lat.pcap"), Ipv4IdMode.STRICT_ID_ZERO)) {
            final int n = r.deliverRequesterPackets();
            assertEquals(5, n);
            assertEquals(n, r.ctx.counters().get(Counter.DROP_BAD_ICRC));
            assertEquals(0, r.ctx.counters().get(Counter.ICRC_RECOVERED_ID));
            assertEquals(0, r.sentCount(), "nothing answered");
        }
    }

    @Test
    void aPacketFromAnotherAddressIsNotTakenForThePeers() throws Exception {
        // the ICRC covers the source address: the same bytes from elsewhere fail it (and never reach the QP)
        final Capture cap = Capture.load("read-lat.pcap");
        try (Replay r = new Replay(cap, Ipv4IdMode.AUTO)) {
            final ClassicPcap.IpPacket first = cap.roce.get(0);
            r.offer(first.payload, new java.net.InetSocketAddress(java.net.InetAddress.getByName("10.88.0.3"),
                    first.srcPort));
            assertEquals(1, r.ctx.counters().get(Counter.DROP_BAD_ICRC));
            assertEquals(0, r.sentCount());
        }
    }
}
