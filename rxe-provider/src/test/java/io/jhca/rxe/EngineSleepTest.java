package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

import io.jhca.rxe.link.LinkFaults;
import io.jhca.rxe.transport.RxeCounters;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * Engine threads that have gone quiet sleep in the kernel, and what the application or the peer does wakes them at
 * once: a post (builder or postSend), a datagram from the peer, a control action (modify), the device's close;
 * and a sleeping engine wakes for its own timers: retransmission, a packet its link held back.
 * The devices here park for a whole minute at a time once idle, so anything that did not wake an engine shows as
 * a completion missing after 20 s (the rig's wait) or as a retransmission counted, not as a slow pass; nothing is
 * timed.
 */
class EngineSleepTest {

    private static final long A_MINUTE = 60_000_000_000L;

    private static Rig sleepyRig() {
        return sleepyRig(UnaryOperator.identity(), 14);
    }

    /**
     * @param configB more of device B's configuration; @param timeout both QPs' local ACK timeout code. The test's
     * polls do not drive the devices ({@code pollProgress(false)}): only what wakes an engine thread moves anything.
     */
    private static Rig sleepyRig(final UnaryOperator<RxeDeviceConfig.Builder> configB, final int timeout) {
        return new Rig(Rig.config("slpA", ProgressMode.THREAD).idlePark(A_MINUTE, A_MINUTE).pollProgress(false).build(),
                configB.apply(Rig.config("slpB", ProgressMode.THREAD).idlePark(A_MINUTE, A_MINUTE).pollProgress(false))
                        .build(),
                QpType.RC, 1 << 16, Mtu.MTU_1024, UnaryOperator.identity(), timeout);
    }

    /** One signaled 8-byte RDMA WRITE from A to B. */
    private static void writeAtoB(final Rig rig, final long wrId) {
        assertEquals(1, rig.qpA.postSend(new SendWr(1).wrId(wrId).opcode(WrOpcode.RDMA_WRITE)
                .rdma(rig.mrB.address() + 512, rig.mrB.rkey()).sge(rig.mrA, 512, 8).sendFlags(SendFlags.SIGNALED)));
    }

    /**
     * Waits (up to 20 s) until both engine threads sleep in the kernel: after 2 ms of quiet they do. The sleeping flag
     * alone is not enough: it is raised before the sleep's last duty cycle, which takes a post that comes then without
     * sleeping (and leaves the wake in the eventfd for the next sleep), so both must still be in the same sleep a
     * little later.
     */
    private static long[] bothAsleep(final Rig rig) throws InterruptedException {
        final long end = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < end) {
            final long[] a = rig.a.engine().sleepCounts();
            final long[] b = rig.b.engine().sleepCounts();
            if (rig.a.engine().asleep() && rig.b.engine().asleep()) {
                Thread.sleep(2);
                if (rig.a.engine().asleep() && rig.b.engine().asleep()
                        && java.util.Arrays.equals(a, rig.a.engine().sleepCounts())
                        && java.util.Arrays.equals(b, rig.b.engine().sleepCounts())) {
                    return new long[] {a[1], b[1]};
                }
            }
            Thread.sleep(5);
        }
        throw new AssertionError("the engines never went to sleep: A " + java.util.Arrays.toString(
                rig.a.engine().sleepCounts()) + ", B " + java.util.Arrays.toString(rig.b.engine().sleepCounts()));
    }

    @Test
    void aPostAndThePeersPacketWakeSleepingEngines() throws Exception {
        try (Rig rig = sleepyRig()) {
            for (int round = 0; round < 3; round++) {
                final long[] early = bothAsleep(rig);
                final byte mark = (byte) (0x40 + round);
                rig.memA.buffer().putByte(100, mark);
                if (round % 2 == 0) {
                    assertEquals(0, rig.qpA.sendQueue().start().wrId(round).flags(SendFlags.SIGNALED)
                            .rdmaWrite(rig.mrB.rkey(), rig.mrB.address() + 200).sge(rig.mrA, 100, 1).complete());
                } else {
                    assertEquals(1, rig.qpA.postSend(new SendWr(1).wrId(round).opcode(WrOpcode.RDMA_WRITE)
                            .rdma(rig.mrB.address() + 200, rig.mrB.rkey()).sge(rig.mrA, 100, 1)
                            .sendFlags(SendFlags.SIGNALED)));
                }
                // a WRITE completes only after B's engine took the request and A's took the ACK
                rig.expect(rig.cqA, round, WcStatus.SUCCESS);
                assertEquals(mark, rig.memB.buffer().getByte(200), "round " + round);
                assertTrue(rig.a.engine().sleepCounts()[1] > early[0], "the post ended A's sleep");
                assertTrue(rig.b.engine().sleepCounts()[1] > early[1], "the request ended B's sleep");
            }
        }
    }

    @Test
    void aReceivePostAndAModifyReachSleepingEngines() throws Exception {
        try (Rig rig = sleepyRig()) {
            bothAsleep(rig);
            // a receive posted while B sleeps, then a SEND from A: B's engine takes the request into it
            assertEquals(1, rig.qpB.postRecv(new RecvWr(1).wrId(7).sge(rig.mrB, 0, 64)));
            bothAsleep(rig);
            assertEquals(1, rig.qpA.postSend(new SendWr(1).wrId(8).opcode(WrOpcode.SEND).sge(rig.mrA, 0, 16)
                    .sendFlags(SendFlags.SIGNALED)));
            rig.expect(rig.cqB, 7, WcStatus.SUCCESS);
            rig.expect(rig.cqA, 8, WcStatus.SUCCESS);
            // a control action runs on the engine thread: a modify to ERR returns, and the receive posted after it
            // is flushed by the engine it woke
            bothAsleep(rig);
            rig.qpB.modify(QpAttributes.toState(QpState.ERR));
            bothAsleep(rig);
            assertEquals(1, rig.qpB.postRecv(new RecvWr(1).wrId(9).sge(rig.mrB, 0, 64)));
            final WorkCompletion wc = rig.expect(rig.cqB, 9, WcStatus.WR_FLUSH_ERR);
            assertEquals(9, wc.wrId());
        }
    }

    /**
     * B's QP in ERR drops A's request, so only A's retransmit timer (code 13, 33.6 ms) moves anything, and it resends
     * for ever (retry_cnt 7 is infinite, as in rxe). Each wait is much longer than the 2 ms of yielding before a
     * sleep, so A's engine sleeps before the retries and its timer must end the sleep (a minute otherwise). On a
     * loaded machine a yield can last long enough for a timer to fall due first, so one sleep is all that is asked.
     */
    @Test
    void theRetransmitTimerEndsTheSleep() throws Exception {
        try (Rig rig = sleepyRig(UnaryOperator.identity(), 13)) {
            rig.qpB.modify(QpAttributes.toState(QpState.ERR));
            bothAsleep(rig);
            final long slept = rig.a.engine().sleepCounts()[0];
            writeAtoB(rig, 21);
            final long end = System.nanoTime() + 20_000_000_000L;
            while (rig.a.counters().get(RxeCounters.Counter.RETRANSMITTED_PKTS) < 3 && System.nanoTime() < end) {
                Thread.sleep(5);
            }
            assertTrue(rig.a.counters().get(RxeCounters.Counter.RETRANSMITTED_PKTS) >= 3,
                    "three retransmissions within 20 s: " + rig.a.counters());
            assertTrue(rig.a.engine().sleepCounts()[0] > slept, "A's engine slept while a retry was due");
        }
    }

    /** B's link holds every packet it receives 20 ms: B's engine must wake when the request is due. */
    @Test
    void aPacketTheLinkHeldBackIsDeliveredWhileItsEngineSleeps() throws Exception {
        try (Rig rig = sleepyRig(b -> b.rxFaults(LinkFaults.NONE.withDelay(1.0, 20_000_000L)), 16)) {
            for (int round = 0; round < 2; round++) {
                bothAsleep(rig);
                rig.memA.buffer().putLong(512, 0x1122334455667700L + round);
                writeAtoB(rig, 40 + round);
                rig.expect(rig.cqA, 40 + round, WcStatus.SUCCESS);
                assertEquals(0x1122334455667700L + round, rig.memB.buffer().getLong(512));
            }
            assertEquals(0, rig.a.counters().get(RxeCounters.Counter.RETRANSMITTED_PKTS), "no request was resent");
        }
    }

    /**
     * A held ACK's release is a deadline too. An engine thread yields 2 ms before it sleeps, longer than an ACK may be
     * held (1 ms at most), so here the sleep is called directly, on caller-progress devices: B holds the ACK of A's
     * request, and B's engine, asked to sleep ten minutes, must wake when the hold ends (the test's 60 s timeout fails
     * it otherwise; in caller progress nothing else moves, so no datagram can end the sleep instead).
     */
    @Test
    void aSleepEndsWhenAHeldAckIsDue() {
        try (Rig rig = new Rig(Rig.config("hldA", ProgressMode.CALLER).build(),
                Rig.config("hldB", ProgressMode.CALLER).ackHoldNanos(1_000_000L).build(), QpType.RC, 1 << 16,
                Mtu.MTU_1024, UnaryOperator.identity())) {
            rig.b.engine().sleep(1); // opens the kernel wait (the native calls' first use), so later sleeps start at once
            boolean slept = false;
            for (int round = 0; round < 5 && !slept; round++) {
                final long deferred = rig.b.counters().get(RxeCounters.Counter.ACK_DEFERRED);
                writeAtoB(rig, 50 + round);
                while (rig.b.counters().get(RxeCounters.Counter.ACK_DEFERRED) == deferred) {
                    rig.a.progress();
                    rig.b.progress();
                }
                final long sleeps = rig.b.engine().sleepCounts()[0];
                // a round that took longer than the hold to get here finds the ACK sent, and nothing else would end
                // a sleep: it does not sleep
                if (rig.b.engine().nanosToNextTimer(System.nanoTime()) != Long.MAX_VALUE) {
                    rig.b.engine().sleep(600_000_000_000L);
                    slept = rig.b.engine().sleepCounts()[0] > sleeps; // not if the hold ended before the sleep began
                }
                rig.expect(rig.cqA, 50 + round, WcStatus.SUCCESS);
                // B answers: a hold that only delayed its ACK makes B's next ACK leave at once (Responder's holdPays);
                // a request from B makes the next round's hold a whole one again
                assertEquals(1, rig.qpB.postSend(new SendWr(1).wrId(60 + round).opcode(WrOpcode.RDMA_WRITE)
                        .rdma(rig.mrA.address() + 1024, rig.mrA.rkey()).sge(rig.mrB, 1024, 8)
                        .sendFlags(SendFlags.SIGNALED)));
                rig.expect(rig.cqB, 60 + round, WcStatus.SUCCESS);
            }
            assertTrue(slept, "B's engine slept while it held the ACK, in one of five tries (each has 1 ms to get there)");
            assertEquals(0, rig.a.counters().get(RxeCounters.Counter.RETRANSMITTED_PKTS), "no request was resent");
        }
    }

    @Test
    void aDeviceClosesWhileItsEngineSleeps() throws Exception {
        final Rig rig = sleepyRig();
        bothAsleep(rig);
        rig.close(); // the runner's stop would otherwise wait out the minute's sleep: the test's timeout fails it
        assertTrue(rig.a.engine().sleepCounts()[0] > 0 && rig.b.engine().sleepCounts()[0] > 0);
    }
}
