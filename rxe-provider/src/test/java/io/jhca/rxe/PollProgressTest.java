package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.jhca.verbs.CompletionChannel;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.util.Random;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Thread progress driven by an application that only polls its CQs ({@value RxeDeviceConfig#POLL_PROGRESS_PROPERTY}):
 * an empty poll runs a duty cycle on the polling thread, a polling loop makes the engine thread step aside, and the
 * poll that returns the awaited completion ends that at once, so a wait that follows on memory (no call of ours in it)
 * finds the engine thread driving; an arm ends it too, and polls of an armed CQ drive nothing. No progress call
 * anywhere in this class.
 */
@Timeout(60)
class PollProgressTest {

    private static final int MSG = 512;

    /** Two threaded devices; {@code ackHold} 0: each ACK leaves at once, as Linux rxe and a ConnectX send theirs. */
    private static Rig rig(final boolean pollProgress, final long ackHold) {
        return new Rig(Rig.config("rxeA", ProgressMode.THREAD).pollProgress(pollProgress).ackHoldNanos(ackHold).build(),
                Rig.config("rxeB", ProgressMode.THREAD).pollProgress(pollProgress).ackHoldNanos(ackHold).build(),
                QpType.RC, 1 << 16, Mtu.MTU_1024, UnaryOperator.identity());
    }

    /** Polls {@code cq} back to back until a completion (no progress call); whether a loop's mark was seen meanwhile. */
    private static boolean pollOnly(final RxeContext ctx, final CompletionQueue cq, final WorkCompletion wc) {
        boolean driven = false;
        final long end = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < end) {
            if (cq.poll(wc) == 1) {
                return driven;
            }
            driven |= ctx.engine().drivenByCaller();
        }
        fail("no completion on " + cq.describe() + "; counters " + ctx.counters());
        return driven;
    }

    @Test
    void emptyPollsDriveAThreadedDevice() {
        final Random rnd = new Random(Rig.seed("PollProgressTest"));
        try (Rig r = rig(true, RxeDeviceConfig.DEFAULT_ACK_HOLD_NANOS)) {
            // polls of a CQ nothing arrives at, back to back: they run cycles, and the engine thread steps aside
            final WorkCompletion none = new WorkCompletion();
            while (!r.a.engine().drivenByCaller()) {   // the class timeout fails it if never
                assertEquals(0, r.cqA.poll(none));
            }
            final WorkCompletion wc = new WorkCompletion();
            int driven = 0;
            for (int i = 0; i < 300; i++) {
                final byte[] bytes = new byte[1 + rnd.nextInt(MSG)];
                rnd.nextBytes(bytes);
                r.memA.buffer().putBytes(0, bytes);
                r.memB.buffer().setMemory(0, MSG, (byte) 0);
                assertEquals(1, r.qpB.postRecv(new RecvWr().wrId(1000 + i).sge(r.mrB, 0, MSG)));
                assertEquals(1, r.qpA.postSend(new SendWr().wrId(i).opcode(WrOpcode.SEND)
                        .sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, bytes.length)));
                if (pollOnly(r.b, r.cqB, wc)) {
                    driven++;
                }
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                assertEquals(1000 + i, wc.wrId());
                assertEquals(WcOpcode.RECV, wc.opcode());
                assertEquals(bytes.length, wc.byteLen());
                for (int k = 0; k < bytes.length; k++) {
                    assertEquals(bytes[k], r.memB.buffer().getByte(k), "message " + i + ", byte " + k);
                }
                assertEquals(0, r.memB.buffer().getByte(bytes.length), "message " + i + ": one past its last byte");
                pollOnly(r.a, r.cqA, wc);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                assertEquals(i, wc.wrId());
            }
            assertTrue(driven > 0, "B's polls never drove its engine in 300 waits");
            assertNull(r.a.engine().lastError());
            assertNull(r.b.engine().lastError());
        }
    }

    /**
     * perftest's write_lat against a peer that ACKs at once: each side polls its send CQ for its WRITE's completion
     * (the ACK), then waits for the peer's WRITE by memory alone. The poll that returns the completion ends the
     * loop's mark there and then, so the engine thread takes the peer's WRITE; before, it stayed parked for the loop
     * a millisecond or more per iteration. Every WRITE's bytes are checked.
     */
    @Test
    void aCompletionEndsTheLoopSoAMemoryWaitFindsTheEngineThread() {
        final Random rnd = new Random(Rig.seed("PollProgressTest"));
        try (Rig r = rig(true, 0)) {
            final WorkCompletion wc = new WorkCompletion();
            final long raddr = r.mrB.address() + MSG;
            int marked = 0;
            for (int i = 1; i <= 200; i++) {
                final byte[] bytes = new byte[MSG];
                rnd.nextBytes(bytes);
                bytes[MSG - 1] = (byte) i;   // the count rides in the last byte, as perftest's
                r.memA.buffer().putBytes(0, bytes);
                assertEquals(1, r.qpA.postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE)
                        .sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, MSG).rdma(raddr, r.mrB.rkey())));
                while (!r.a.engine().drivenByCaller()) {   // A's send CQ poll loop, until it marks (or completes)
                    if (r.cqA.poll(wc) == 1) {
                        break;
                    }
                }
                if (wc.wrId() != i) {
                    marked++;
                    pollOnly(r.a, r.cqA, wc);
                }
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                assertEquals(i, wc.wrId());
                assertFalse(r.a.engine().drivenByCaller(), "iteration " + i + ": the loop's mark after its completion");
                // B sees the bytes by memory alone (no poll, no call), as write_lat's peer does
                final long end = System.nanoTime() + 20_000_000_000L;
                while (r.memB.buffer().getByteVolatile(MSG + MSG - 1) != (byte) i) {
                    if (System.nanoTime() > end) {
                        fail("iteration " + i + ": A's WRITE never landed at B");
                    }
                    Thread.onSpinWait();
                }
                for (int k = 0; k < MSG; k++) {
                    assertEquals(bytes[k], r.memB.buffer().getByte(MSG + k), "iteration " + i + ", byte " + k);
                }
            }
            assertTrue(marked > 0, "A's polls never marked a loop before the completion: nothing was tested");
            assertNull(r.a.engine().lastError());
            assertNull(r.b.engine().lastError());
        }
    }

    /**
     * An application that polls, then arms its CQ and sleeps on the channel (perftest's -e, or a poll-then-sleep loop):
     * the arm ends the loop, and polls of the armed CQ drive nothing, so the engine thread, not parked for a loop that
     * has gone to sleep, raises the event. Before, two empty polls around the arm marked a loop and the engine thread
     * parked for it, 1 to 16 ms, while the application slept.
     */
    @Test
    void anArmEndsTheLoopAndPollsOfAnArmedCqDriveNothing() throws Exception {
        final Random rnd = new Random(Rig.seed("PollProgressTest"));
        try (Rig r = rig(true, RxeDeviceConfig.DEFAULT_ACK_HOLD_NANOS);
                CompletionChannel ch = r.b.createCompletionChannel();
                CompletionQueue cq = r.b.createCq(64, ch);
                QueuePair qpB = r.pdB.createQp(QpInitAttributes.rc(cq, cq));
                QueuePair qpA = r.pdA.createQp(QpInitAttributes.rc(r.cqA, r.cqA))) {
            Rig.connect(qpA, r.a, qpB, r.b, Mtu.MTU_1024, 0x100, 0x200, 14);
            Rig.connect(qpB, r.b, qpA, r.a, Mtu.MTU_1024, 0x200, 0x100, 14);
            final WorkCompletion wc = new WorkCompletion();
            for (int round = 0; round < 20; round++) {
                while (!r.b.engine().drivenByCaller()) {   // a polling loop on the disarmed CQ, until it marks
                    assertEquals(0, cq.poll(wc));
                }
                cq.requestNotify(false);
                assertFalse(r.b.engine().drivenByCaller(), "round " + round + ": the loop's mark after the arm");
                for (int k = 0; k < 2000; k++) {
                    assertEquals(0, cq.poll(wc));
                    assertFalse(r.b.engine().drivenByCaller(), "round " + round + ": poll " + k + " of the armed CQ");
                }
                final byte[] bytes = new byte[1 + rnd.nextInt(MSG)];
                rnd.nextBytes(bytes);
                r.memA.buffer().putBytes(0, bytes);
                assertEquals(1, qpB.postRecv(new RecvWr().wrId(round).sge(r.mrB, 0, MSG)));
                assertEquals(1, qpA.postSend(new SendWr().wrId(round).opcode(WrOpcode.SEND)
                        .sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, bytes.length)));
                assertSame(cq, ch.getEvent(20_000), "round " + round + ": no event in 20 s");
                cq.ackEvents(1);
                assertEquals(1, cq.poll(wc), "round " + round + ": the event's completion");
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                assertEquals(round, wc.wrId());
                assertEquals(bytes.length, wc.byteLen());
                for (int k = 0; k < bytes.length; k++) {
                    assertEquals(bytes[k], r.memB.buffer().getByte(k), "round " + round + ", byte " + k);
                }
                pollOnly(r.a, r.cqA, wc);
                assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
            }
        }
    }

    /** Turned off, an empty poll only reads the CQ: no loop mark however fast the polls, and the engine thread drives. */
    @Test
    void turnedOffAnEmptyPollOnlyReads() {
        try (Rig r = rig(false, RxeDeviceConfig.DEFAULT_ACK_HOLD_NANOS)) {
            final WorkCompletion wc = new WorkCompletion();
            final long end = System.nanoTime() + 5_000_000;
            while (System.nanoTime() < end) {
                assertEquals(0, r.cqA.poll(wc));
                assertFalse(r.a.engine().drivenByCaller());
            }
            assertEquals(1, r.qpB.postRecv(new RecvWr().wrId(7).sge(r.mrB, 0, MSG)));
            assertEquals(1, r.qpA.postSend(new SendWr().wrId(8).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, MSG)));
            assertFalse(pollOnly(r.b, r.cqB, wc), "a loop's mark without poll progress");
            assertEquals(7, wc.wrId());
            assertEquals(WcStatus.SUCCESS, wc.status());
        }
    }

    @Test
    void propertyTurnsItOnAndOff() {
        BooleanProperty.check(RxeDeviceConfig.POLL_PROGRESS_PROPERTY, RxeDeviceConfig::pollProgress, "1", "off");
        assertTrue(RxeDeviceConfig.builder("p0").address("127.0.0.1").build().pollProgress());
        assertEquals(false, RxeDeviceConfig.builder("p1").address("127.0.0.1").pollProgress(false).build().pollProgress());
    }
}
