package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.rxe.transport.RxeCounters;
import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpType;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * The responder holds the ACK a request asks for (coalesced acknowledges, IBTA 9.7.5.1): a later ACK replaces it,
 * and in a ping-pong it leaves with the answer the application posts, just before it. Caller progress, so every engine cycle
 * is the test's own and the order of events is exact.
 */
class CoalescedAckTest {

    private static final int OP_RDMA_WRITE_ONLY = 0x0A;
    private static final int OP_ACKNOWLEDGE = 0x11;

    /** Two caller-mode devices that hold ACKs for the default time. */
    private static Rig held() {
        return held(true);
    }

    /** {@code ring} false: B takes its datagrams by its socket, whose first receive after a quiet one takes one. */
    private static Rig held(final boolean ring) {
        return new Rig(Rig.config("heldA", ProgressMode.CALLER).ring(ring).build(),
                Rig.config("heldB", ProgressMode.CALLER).ring(ring).build(), QpType.RC, 1 << 16, Mtu.MTU_1024, i -> i);
    }

    @Test
    void theHeldAckLeavesWithTheAnswerOfAPingPongJustBeforeIt(@TempDir final Path dir) throws IOException {
        final Path pcapA = dir.resolve("a.pcap");
        final Path pcapB = dir.resolve("b.pcap");
        final String addressB = pingPong(pcapA, pcapB, false);
        assertEquals(List.of(OP_ACKNOWLEDGE, OP_RDMA_WRITE_ONLY), from(addressB, pcapB).subList(0, 2),
                "B's packets as it sent them: the ACK of A's WRITE, then its own");
        assertEquals(List.of(OP_ACKNOWLEDGE, OP_RDMA_WRITE_ONLY), from(addressB, pcapA).subList(0, 2),
                "B's packets as A took them in: the ACK first, as from a responder that never holds one");
    }

    /**
     * On loopback, by default, the two leave as one GSO datagram, the answer first (the longer segment): A takes them
     * in that order and checks both ICRCs in full, the ACK's with the IPv4 ID 1 a split gives the second segment.
     */
    @Test
    void onLoopbackTheHeldAckAndTheAnswerLeaveAsOneDatagram(@TempDir final Path dir) throws IOException {
        final Path pcapA = dir.resolve("a.pcap");
        final Path pcapB = dir.resolve("b.pcap");
        final long[] icrc = new long[2];
        final String addressB = pingPong(pcapA, pcapB, true, icrc);
        assertEquals(List.of(OP_RDMA_WRITE_ONLY, OP_ACKNOWLEDGE), from(addressB, pcapB).subList(0, 2),
                "B's packets as it sent them: its WRITE, then the ACK of A's, in one datagram");
        assertEquals(List.of(OP_RDMA_WRITE_ONLY, OP_ACKNOWLEDGE), from(addressB, pcapA).subList(0, 2),
                "B's packets as A took them in");
        assertEquals(0, icrc[1], "no ICRC of B's packets needed its IPv4 ID solved for");
        assertTrue(icrc[0] >= 2, "A checked the ICRC of both in full: " + icrc[0]);
    }

    private static String pingPong(final Path pcapA, final Path pcapB, final boolean gso) {
        return pingPong(pcapA, pcapB, gso, new long[2]);
    }

    /** A's WRITE, B's answer; returns B's address, and A's full and recovered ICRC checks in {@code icrc}. */
    private static String pingPong(final Path pcapA, final Path pcapB, final boolean gso, final long[] icrc) {
        final String addressB;
        try (Rig r = new Rig(Rig.config("ackA", ProgressMode.CALLER).pcap(pcapA).gso(gso).build(),
                Rig.config("ackB", ProgressMode.CALLER).pcap(pcapB).gso(gso).build(), QpType.RC, 1 << 16, Mtu.MTU_1024,
                i -> i)) {
            addressB = Rig.gid(r.b).toInetAddress().getHostAddress();
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 64).rdma(r.mrB.address(), r.mrB.rkey()));
            driveUntil(() -> qp(r.qpA).get(Counter.SENT_PKTS) == 1, r.a);
            // the cycle that takes the WRITE in holds its ACK (the default hold)
            driveUntil(() -> qp(r.qpB).get(Counter.RX_WRITE_REQUESTS) == 1, r.b);
            assertEquals(0, qp(r.qpB).get(Counter.SENT_PKTS), "the ACK is held");
            assertEquals(1, qp(r.qpB).get(Counter.ACK_DEFERRED));
            // the answer: the held ACK and the answer's WRITE go out in the next cycle, the ACK first
            r.qpB.postSend(new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrB, 128, 64).rdma(r.mrA.address() + 128, r.mrA.rkey()));
            r.b.progress();
            assertEquals(2, qp(r.qpB).get(Counter.SENT_PKTS));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            r.expect(r.cqB, 2, WcStatus.SUCCESS);
            icrc[0] = device(r.a).get(Counter.ICRC_CHECKED_FULL);
            icrc[1] = device(r.a).get(Counter.ICRC_RECOVERED_ID);
        }
        return addressB;
    }

    /** Opcodes of the packets in {@code pcap} whose IPv4 source is {@code address}, in the file's order. */
    private static List<Integer> from(final String address, final Path pcap) throws IOException {
        final List<Integer> out = new ArrayList<>();
        for (final int[] p : roce(pcap)) {
            if (ipv4(p[1]).equals(address)) {
                out.add(p[0]);
            }
        }
        return out;
    }

    @Test
    void theAckOfAMessageCompletedOnAnArmedCqLeavesAtOnce() throws InterruptedException {
        try (Rig r = held()) {
            final io.jhca.verbs.CompletionChannel channel = r.b.createCompletionChannel();
            final io.jhca.verbs.CompletionQueue cq = r.b.createCq(16, channel);
            final io.jhca.verbs.QueuePair qpB = r.pdB.createQp(io.jhca.verbs.QpInitAttributes.of(QpType.RC, cq, cq)
                    .maxSendWr(16).maxRecvWr(16));
            final io.jhca.verbs.QueuePair qpA = r.pdA.createQp(io.jhca.verbs.QpInitAttributes.of(QpType.RC, r.cqA, r.cqA)
                    .maxSendWr(16).maxRecvWr(16));
            Rig.connect(qpA, r.a, qpB, r.b, Mtu.MTU_1024, 0x3000, 0x4000, 14);
            Rig.connect(qpB, r.b, qpA, r.a, Mtu.MTU_1024, 0x4000, 0x3000, 14);
            for (int i = 0; i < 2; i++) {
                qpB.postRecv(new io.jhca.verbs.RecvWr().wrId(10 + i).sge(r.mrB, 256L * i, 64));
            }
            final io.jhca.verbs.WorkCompletion wc = new io.jhca.verbs.WorkCompletion();
            // a polling receiver: the SEND's ACK is held
            qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 64));
            driveUntil(() -> qp(qpA).get(Counter.SENT_PKTS) == 1, r.a);
            driveUntil(() -> cq.poll(wc) == 1, r.b);
            assertEquals(10, wc.wrId());
            assertEquals(0, qp(qpB).get(Counter.SENT_PKTS), "a polling receiver's ACK is held");
            driveUntil(() -> qp(qpB).get(Counter.SENT_PKTS) == 1, r.b);   // by time
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            // a receiver asleep on its CQ's event: the ACK leaves in the cycle that completes the SEND
            cq.requestNotify(false);
            qpA.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 64, 64));
            driveUntil(() -> qp(qpA).get(Counter.SENT_PKTS) == 2, r.a);
            driveUntil(() -> cq.poll(wc) == 1, r.b);
            assertEquals(11, wc.wrId());
            assertEquals(2, qp(qpB).get(Counter.SENT_PKTS), "the ACK left with the completion's event");
            assertEquals(1, qp(qpB).get(Counter.ACK_DEFERRED), "only the first ACK was held");
            r.expect(r.cqA, 2, WcStatus.SUCCESS);
            assertEquals(cq, channel.getEvent(10_000));
            cq.ackEvents(1);
            qpA.close();
            qpB.close();
            cq.close();
            channel.close();
        }
    }

    @Test
    void aHeldAckLeavesThoughTheApplicationMakesNoMoreProgressCalls() {
        try (Rig r = held()) {
            r.qpA.postSend(new SendWr().wrId(5).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 64).rdma(r.mrB.address(), r.mrB.rkey()));
            driveUntil(() -> qp(r.qpA).get(Counter.SENT_PKTS) == 1, r.a);
            driveUntil(() -> qp(r.qpB).get(Counter.RX_WRITE_REQUESTS) == 1, r.b);
            assertEquals(0, qp(r.qpB).get(Counter.SENT_PKTS), "the ACK is held");
            // B took its last message and calls progress no more; its device still acknowledges it
            final io.jhca.verbs.WorkCompletion wc = new io.jhca.verbs.WorkCompletion();
            driveUntil(() -> r.cqA.poll(wc) == 1, r.a);
            assertEquals(WcStatus.SUCCESS, wc.status());
            assertEquals(5, wc.wrId());
            assertEquals(1, qp(r.qpB).get(Counter.SENT_PKTS));
            assertEquals(1, qp(r.qpB).get(Counter.ACKS_SENT_BY_WATCH), "B's watch thread sent it");
            assertEquals(0, qp(r.qpA).get(Counter.RETRANSMITTED_PKTS), "acknowledged before A's retransmit timer");
        }
    }

    /**
     * Applications that keep calling progress, if slowly (a ping-pong that answers 0.5 ms after each message, under the
     * watch's quiet time of 1 ms), send their held ACKs in their own cycles, with their answers: the watch threads do
     * not take the engines from them, though each ACK falls due 4 us after its WRITE and then waits for the answer
     * (where a watch took the lock whenever it looked then, and sent the ACK alone while the application's next
     * progress call waited for the lock: 20 and 43 of 200 here, against 5 and 10 gaps). Only where this machine stalled the test's thread
     * past the quiet time between two progress calls may a watch send one; the test counts those gaps.
     */
    @Test
    void theWatchLeavesTheEngineToAnApplicationThatCallsProgress() {
        final int rounds = 200;   // 0.2 s of answers 0.5 ms late: each watch looks a dozen times or more
        try (Rig r = held()) {
            final Caller a = new Caller(r.a);
            final Caller b = new Caller(r.b);
            final io.jhca.verbs.WorkCompletion wc = new io.jhca.verbs.WorkCompletion();
            for (int i = 0; i < rounds; i++) {
                final long round = i + 1;
                r.qpA.postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                        .sge(r.mrA, 0, 64).rdma(r.mrB.address() + 512, r.mrB.rkey()));   // A -> B
                a.until(() -> qp(r.qpA).get(Counter.SENT_PKTS) == 2 * round - 1);   // with A's held ACK, if any
                b.until(() -> qp(r.qpB).get(Counter.RX_WRITE_REQUESTS) == round);   // B holds its ACK
                if (i > 0) {
                    b.until(() -> r.cqB.poll(wc) == 1);   // A's ACK came with A's WRITE
                    assertEquals(i - 1, wc.wrId());
                }
                spin(500_000);
                r.qpB.postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                        .sge(r.mrB, 0, 64).rdma(r.mrA.address() + 512, r.mrA.rkey()));   // B answers
                b.until(() -> qp(r.qpB).get(Counter.SENT_PKTS) == 2 * round);
                a.until(() -> qp(r.qpA).get(Counter.RX_WRITE_REQUESTS) == round);   // A holds its ACK
                a.until(() -> r.cqA.poll(wc) == 1);   // B's ACK came with the answer
                assertEquals(i, wc.wrId());
                assertEquals(WcStatus.SUCCESS, wc.status());
                spin(500_000);
            }
            a.until(() -> qp(r.qpA).get(Counter.SENT_PKTS) == 2 * rounds);   // A's last ACK leaves by time, in A's cycle
            b.until(() -> r.cqB.poll(wc) == 1);
            assertEquals(rounds - 1, wc.wrId());
            for (final Caller c : List.of(a, b)) {
                final RxeCounters n = qp(c == a ? r.qpA : r.qpB);
                assertEquals(rounds, n.get(Counter.ACK_DEFERRED), "every ACK held: " + n);
                assertTrue(n.get(Counter.ACKS_SENT_BY_WATCH) <= c.quietGaps, "the application's cycles sent its ACKs, the watch"
                        + " at most one per gap of 0.9 ms or more between its progress calls (" + c.quietGaps + "): " + n);
                assertEquals(0, n.get(Counter.RETRANSMITTED_PKTS));
            }
        }
    }

    /**
     * Both devices hold ACKs, and one thread watches them: a thread per device woke as often each, two of them on the
     * two cores an in-process ping-pong measures on.
     */
    @Test
    void oneWatchThreadServesEveryDevice() {
        try (Rig r = held()) {
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 64).rdma(r.mrB.address(), r.mrB.rkey()));
            r.qpB.postSend(new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrB, 0, 64).rdma(r.mrA.address(), r.mrA.rkey()));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            r.expect(r.cqB, 2, WcStatus.SUCCESS);
            assertTrue(qp(r.qpA).get(Counter.ACK_DEFERRED) + qp(r.qpB).get(Counter.ACK_DEFERRED) >= 2,
                    "both devices held an ACK: " + qp(r.qpA) + " " + qp(r.qpB));
            final List<String> watches = new ArrayList<>();
            for (final Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().startsWith("jhca-rxe-") && t.getName().endsWith("held-acks")) {
                    watches.add(t.getName());
                }
            }
            assertEquals(List.of("jhca-rxe-held-acks"), watches, "one watch thread for the process");
        }
    }

    /** One side's progress calls, counting the gaps between two of them that come near the watch's quiet time (1 ms). */
    private static final class Caller {
        private static final long NEAR_QUIET_NANOS = 900_000;
        private final RxeContext ctx;
        private long last;
        int quietGaps;

        Caller(final RxeContext ctx) {
            this.ctx = ctx;
        }

        void until(final java.util.function.BooleanSupplier done) {
            final long end = System.nanoTime() + 10_000_000_000L;
            while (!done.getAsBoolean()) {
                assertTrue(System.nanoTime() < end, "no progress within 10 s; counters " + ctx.counters());
                final long now = System.nanoTime();
                if (last != 0 && now - last >= NEAR_QUIET_NANOS) {
                    quietGaps++;
                }
                ctx.progress();
                last = System.nanoTime();
            }
        }
    }

    private static void spin(final long nanos) {
        final long end = System.nanoTime() + nanos;
        while (System.nanoTime() < end) {
            Thread.onSpinWait();
        }
    }

    @Test
    void aHeldAckLeavesBeforeTheQpGoesToErr() {
        // the longest hold, so that only the modify can have sent it when it returns
        try (Rig r = new Rig(Rig.config("errA", ProgressMode.CALLER).build(), Rig.config("errB", ProgressMode.CALLER)
                .ackHoldNanos(RxeDeviceConfig.MAX_ACK_HOLD_NANOS).build(), QpType.RC, 1 << 16, Mtu.MTU_1024, i -> i)) {
            r.qpA.postSend(new SendWr().wrId(6).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 64).rdma(r.mrB.address(), r.mrB.rkey()));
            driveUntil(() -> qp(r.qpA).get(Counter.SENT_PKTS) == 1, r.a);
            driveUntil(() -> qp(r.qpB).get(Counter.RX_WRITE_REQUESTS) == 1, r.b);
            assertEquals(0, qp(r.qpB).get(Counter.SENT_PKTS), "the ACK is held");
            r.qpB.modify(io.jhca.verbs.QpAttributes.toState(io.jhca.verbs.QpState.ERR)); // as rdma_disconnect does first
            assertEquals(1, qp(r.qpB).get(Counter.SENT_PKTS), "the held ACK left with the modify");
            final io.jhca.verbs.WorkCompletion wc = new io.jhca.verbs.WorkCompletion();
            driveUntil(() -> r.cqA.poll(wc) == 1, r.a);
            assertEquals(WcStatus.SUCCESS, wc.status(), "A's WRITE completes, not flushed by B's teardown");
            assertEquals(6, wc.wrId());
        }
    }

    @Test
    void aHeldAckLeavesWhenTheQpIsDestroyed() {
        try (Rig r = held()) {
            r.qpA.postSend(new SendWr().wrId(7).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 64).rdma(r.mrB.address(), r.mrB.rkey()));
            driveUntil(() -> qp(r.qpA).get(Counter.SENT_PKTS) == 1, r.a);
            driveUntil(() -> qp(r.qpB).get(Counter.RX_WRITE_REQUESTS) == 1, r.b);
            assertEquals(0, qp(r.qpB).get(Counter.SENT_PKTS), "the ACK is held");
            final RxeCounters b = qp(r.qpB);
            r.qpB.close(); // B never calls progress again: the ACK must still leave
            assertEquals(1, b.get(Counter.SENT_PKTS), "the held ACK went out on destroy: " + b);
            final io.jhca.verbs.WorkCompletion wc = new io.jhca.verbs.WorkCompletion();
            driveUntil(() -> r.cqA.poll(wc) == 1, r.a);
            assertEquals(WcStatus.SUCCESS, wc.status());
            assertEquals(7, wc.wrId());
        }
    }

    @Test
    void withoutAHoldEveryAckLeavesAtOnce() {
        try (Rig r = new Rig(Rig.config("nohA", ProgressMode.CALLER).ackHoldNanos(0).build(),
                Rig.config("nohB", ProgressMode.CALLER).ackHoldNanos(0).build(), QpType.RC, 1 << 16, Mtu.MTU_1024, i -> i)) {
            r.qpA.postSend(new SendWr().wrId(3).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 64).rdma(r.mrB.address(), r.mrB.rkey()));
            driveUntil(() -> qp(r.qpA).get(Counter.SENT_PKTS) == 1, r.a);
            driveUntil(() -> qp(r.qpB).get(Counter.RX_WRITE_REQUESTS) == 1, r.b);
            assertEquals(1, qp(r.qpB).get(Counter.SENT_PKTS), "the ACK left in the cycle that took the WRITE in");
            assertEquals(0, qp(r.qpB).get(Counter.ACK_DEFERRED));
            r.expect(r.cqA, 3, WcStatus.SUCCESS);
        }
    }

    /**
     * A hold that ends by time having covered one request alone only delayed its ACK: from then on an ACK waits only
     * for the end of the cycle that took its request in, so a peer that writes and waits for each completion does not
     * wait out a hold every time. A burst taken in one cycle still gets one ACK (a quiet link's first cycle takes one
     * datagram, the next the rest). A sent the 8 WRITEs in one pass, as two GSO datagrams of
     * {@link io.jhca.rxe.link.Link#MAX_BURST_SEGMENTS} each.
     */
    @Test
    void aHoldThatOnlyDelayedItsAckIsNotRepeated() {
        try (Rig r = held(false)) {
            final RxeCounters b = holdStops(r);
            final int burst = 8;
            burst(r, burst);
            // the burst is in B's socket already (loopback); after a receive that found nothing the link takes one
            r.b.progress();
            assertEquals(2 + io.jhca.rxe.link.Link.MAX_BURST_SEGMENTS, b.get(Counter.RX_WRITE_REQUESTS),
                    "the first cycle took one datagram in: " + b);
            assertEquals(3, b.get(Counter.SENT_PKTS), "its ACK left in that cycle: " + b);
            r.b.progress();
            assertEquals(2 + burst, b.get(Counter.RX_WRITE_REQUESTS), "the next cycle took the rest in: " + b);
            assertEquals(4, b.get(Counter.SENT_PKTS), "one ACK for them, in that cycle: " + b);
            for (int i = 0; i < burst; i++) {
                r.expect(r.cqA, 10 + i, WcStatus.SUCCESS);
            }
            assertEquals(0, qp(r.qpA).get(Counter.RETRANSMITTED_PKTS));
        }
    }

    /** The same from a packet ring, which hands over every frame waiting: one cycle, one ACK for the whole burst. */
    @Test
    void aHoldThatOnlyDelayedItsAckIsNotRepeatedWhenTheBurstComesFromARing() {
        try (Rig r = held(true)) {
            final RxeCounters b = holdStops(r);
            final int burst = 8;
            burst(r, burst);
            r.b.progress();
            assertEquals(2 + burst, b.get(Counter.RX_WRITE_REQUESTS), "one cycle took the burst in: " + b);
            assertEquals(3, b.get(Counter.SENT_PKTS), "one ACK for it, in that cycle: " + b);
            for (int i = 0; i < burst; i++) {
                r.expect(r.cqA, 10 + i, WcStatus.SUCCESS);
            }
            assertEquals(0, qp(r.qpA).get(Counter.RETRANSMITTED_PKTS));
        }
    }

    /** A posts {@code n} signaled 64-byte WRITEs and sends them all. */
    private static void burst(final Rig r, final int n) {
        for (int i = 0; i < n; i++) {
            r.qpA.postSend(new SendWr().wrId(10 + i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, i * 64L, 64).rdma(r.mrB.address() + i * 64L, r.mrB.rkey()));
        }
        driveUntil(() -> qp(r.qpA).get(Counter.SENT_PKTS) == 2 + n, r.a);
    }

    /**
     * The watch thread ends a hold by the cycle's rule: a lone hold it had to end only delayed its ACK, so the next ACK
     * leaves in the cycle that takes its request in (where the watch's send kept the holding on, and which of the two
     * sent the first ACK decided what the second did).
     */
    @Test
    void aHoldTheWatchEndedOnlyDelayedItsAck() {
        try (Rig r = held()) {
            final RxeCounters b = qp(r.qpB);
            write(r, 1);
            driveUntil(() -> b.get(Counter.RX_WRITE_REQUESTS) == 1, r.b);
            assertEquals(0, b.get(Counter.SENT_PKTS), "the first ACK is held");
            final long end = System.nanoTime() + 10_000_000_000L;
            while (b.get(Counter.ACKS_SENT_BY_WATCH) == 0) {   // B makes no progress call: the watch sends it
                assertTrue(System.nanoTime() < end, "the watch sent nothing within 10 s: " + b);
                Thread.onSpinWait();
            }
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            write(r, 2);
            driveUntil(() -> b.get(Counter.RX_WRITE_REQUESTS) == 2, r.b);
            assertEquals(2, b.get(Counter.SENT_PKTS), "the second ACK left in the cycle that took its WRITE in: " + b);
            assertEquals(1, b.get(Counter.ACKS_SENT_BY_WATCH), b.toString());
            r.expect(r.cqA, 2, WcStatus.SUCCESS);
        }
    }

    /**
     * After a hold that only delayed its ACK, a request the QP sends brings the hold back, whenever it is sent: the
     * ACK after it waits for an answer again.
     */
    @Test
    void aRequestOfTheQpBringsTheHoldBack() {
        try (Rig r = held()) {
            final RxeCounters b = holdStops(r);
            r.qpB.postSend(new SendWr().wrId(100).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrB, 128, 64).rdma(r.mrA.address() + 128, r.mrA.rkey()));
            driveUntil(() -> b.get(Counter.SENT_PKTS) == 3, r.b);   // B's own WRITE
            r.expect(r.cqB, 100, WcStatus.SUCCESS);
            write(r, 3);
            driveUntil(() -> b.get(Counter.RX_WRITE_REQUESTS) == 3, r.b);
            assertEquals(3, b.get(Counter.SENT_PKTS), "the ACK is held again: " + b);
            r.qpB.postSend(new SendWr().wrId(101).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrB, 256, 64).rdma(r.mrA.address() + 256, r.mrA.rkey()));
            r.b.progress();
            assertEquals(5, b.get(Counter.SENT_PKTS), "the held ACK left with B's answer: " + b);
            r.expect(r.cqA, 3, WcStatus.SUCCESS);
            r.expect(r.cqB, 101, WcStatus.SUCCESS);
        }
    }

    /**
     * WRITEs 1 and 2 from A to B, B never answering: B holds the first ACK until its time is up, which stops the hold,
     * and sends the second in the cycle that took its WRITE in. Returns B's QP counters.
     */
    private static RxeCounters holdStops(final Rig r) {
        final RxeCounters b = qp(r.qpB);
        write(r, 1);
        driveUntil(() -> b.get(Counter.RX_WRITE_REQUESTS) == 1, r.b);
        assertEquals(0, b.get(Counter.SENT_PKTS), "the first ACK is held");
        driveUntil(() -> b.get(Counter.SENT_PKTS) == 1, r.b);   // by time: nothing answered, nothing joined it
        r.expect(r.cqA, 1, WcStatus.SUCCESS);
        write(r, 2);
        driveUntil(() -> b.get(Counter.RX_WRITE_REQUESTS) == 2, r.b);
        assertEquals(2, b.get(Counter.SENT_PKTS), "the ACK left in the cycle that took its WRITE in: " + b);
        r.expect(r.cqA, 2, WcStatus.SUCCESS);
        return b;
    }

    /** A signaled one-packet WRITE from A to B, driven until A has sent it (on loopback it is then in B's socket). */
    private static void write(final Rig r, final long wrId) {
        final long at = 1024 + (wrId & 63) * 64;
        final long before = qp(r.qpA).get(Counter.SENT_PKTS);
        r.qpA.postSend(new SendWr().wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .sge(r.mrA, at, 64).rdma(r.mrB.address() + at, r.mrB.rkey()));
        driveUntil(() -> qp(r.qpA).get(Counter.SENT_PKTS) > before, r.a);
    }

    @Test
    void anAckHoldOutsideItsRangeIsRefused() {
        final IllegalArgumentException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> RxeDeviceConfig.builder("x").ackHoldNanos(RxeDeviceConfig.MAX_ACK_HOLD_NANOS + 1));
        assertTrue(e.getMessage().contains("ACK hold"), e.getMessage());
        org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
                () -> RxeDeviceConfig.builder("x").ackHoldNanos(-1));
    }

    @Test
    void oneAckCoversABurstOfRequests() {
        final int n = 32;
        try (Rig r = held()) {
            for (int i = 0; i < n; i++) {
                r.qpA.postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                        .sge(r.mrA, i * 64L, 64).rdma(r.mrB.address() + i * 64L, r.mrB.rkey()));
            }
            driveUntil(() -> qp(r.qpA).get(Counter.SENT_PKTS) == n, r.a);
            // B takes the burst in (a cycle reads up to Engine.RX_BUDGET packets) and acknowledges it
            driveUntil(() -> qp(r.qpB).get(Counter.RX_WRITE_REQUESTS) == n, r.b);
            for (int i = 0; i < n; i++) {
                r.expect(r.cqA, i, WcStatus.SUCCESS);
            }
            final RxeCounters b = qp(r.qpB);
            assertEquals(n, b.get(Counter.ACK_DEFERRED) + b.get(Counter.ACKS_COALESCED), "every AckReq held once: " + b);
            assertEquals(b.get(Counter.ACK_DEFERRED), b.get(Counter.SENT_PKTS), "one ACK per hold: " + b);
            assertTrue(b.get(Counter.ACKS_COALESCED) > 0, "the burst arrived in one cycle, so ACKs were coalesced: " + b);
            assertEquals(0, qp(r.qpA).get(Counter.RETRANSMITTED_PKTS));
        }
    }

    private static RxeCounters device(final io.jhca.verbs.Context ctx) {
        return ((RxeContext) ctx).counters();
    }

    private static RxeCounters qp(final io.jhca.verbs.QueuePair qp) {
        return ((RxeQp) qp).counters();
    }

    private static void driveUntil(final java.util.function.BooleanSupplier done, final RxeContext ctx) {
        new Caller(ctx).until(done);
    }

    /** Opcode and IPv4 source of every RoCEv2 packet of a classic pcap file (Ethernet or raw IP records). */
    private static List<int[]> roce(final Path pcap) throws IOException {
        final ByteBuffer f = ByteBuffer.wrap(Files.readAllBytes(pcap));
        final int magic = f.getInt(0);
        f.order(magic == 0xa1b2c3d4 || magic == 0xa1b23c4d ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
        final int linkType = f.getInt(20);
        final List<int[]> out = new ArrayList<>();
        for (int at = 24; at + 16 <= f.limit(); ) {
            final int len = f.getInt(at + 8);
            final int ip = at + 16 + (linkType == 1 ? 14 : 0);
            final int ihl = (f.get(ip) & 0x0F) * 4;
            final int bth = ip + ihl + 8; // UDP header
            out.add(new int[] {f.get(bth) & 0xFF, f.order(ByteOrder.BIG_ENDIAN).getInt(ip + 12)});
            f.order(magic == 0xa1b2c3d4 || magic == 0xa1b23c4d ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
            at += 16 + len;
        }
        return out;
    }

    private static String ipv4(final int a) {
        return (a >>> 24) + "." + (a >>> 16 & 0xFF) + "." + (a >>> 8 & 0xFF) + "." + (a & 0xFF);
    }
}
