package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * THREAD progress with an application that calls {@code progress()} too: its calls run duty cycles on its own thread,
 * the engine thread stays out while they come, and takes over when they stop, with nothing lost on the way: every
 * message's bytes, a held ACK, control actions from other threads, two threads calling at once.
 */
@Timeout(60)
class ThreadProgressByCallerTest {

    private static final int MSG = 256;

    /** Both devices driven by the calling thread, as an application's polling loop does; the work the calls found. */
    private static long drive(final Rig r) {
        return r.a.progress() + r.b.progress();
    }

    private static WorkCompletion pollDriving(final Rig r, final CompletionQueue cq, final long[] work) {
        final WorkCompletion wc = new WorkCompletion();
        final long end = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < end) {
            work[0] += drive(r);
            if (cq.poll(wc) == 1) {
                return wc;
            }
        }
        fail("no completion on " + cq.describe() + "; counters A " + r.a.counters() + " B " + r.b.counters());
        return null;
    }

    /** One SEND of message {@code i} from A to B: its bytes random from {@code rnd}, checked at B. */
    private static void sendAndCheck(final Rig r, final int i, final Random rnd, final boolean driving,
            final long[] work) {
        final byte[] bytes = new byte[MSG];
        rnd.nextBytes(bytes);
        r.memA.buffer().putBytes(0, bytes);
        r.memB.buffer().setMemory(0, MSG, (byte) 0);
        assertEquals(1, r.qpB.postRecv(new RecvWr().wrId(1000 + i).sge(r.mrB, 0, MSG)));
        assertEquals(1, r.qpA.postSend(new SendWr().wrId(i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .sge(r.mrA, 0, MSG)));
        final WorkCompletion recv = driving ? pollDriving(r, r.cqB, work) : r.poll(r.cqB, 20_000);
        assertEquals(WcStatus.SUCCESS, recv.status(), () -> "message " + i + ": " + recv);
        assertEquals(1000 + i, recv.wrId());
        assertEquals(WcOpcode.RECV, recv.opcode());
        assertEquals(MSG, recv.byteLen());
        final WorkCompletion sent = driving ? pollDriving(r, r.cqA, work) : r.poll(r.cqA, 20_000);
        assertEquals(WcStatus.SUCCESS, sent.status(), () -> "message " + i + ": " + sent);
        assertEquals(i, sent.wrId());
        final byte[] got = new byte[MSG];
        r.memB.buffer().getBytes(0, got);
        for (int k = 0; k < MSG; k++) {
            if (got[k] != bytes[k]) {
                fail("message " + i + ", byte " + k + ": " + got[k] + " != " + bytes[k]);
            }
        }
    }

    @Test
    void progressCallsDriveAThreadedDevice() {
        final Random rnd = new Random(Rig.seed("ThreadProgressByCallerTest"));
        try (Rig r = Rig.rc(ProgressMode.THREAD, 1 << 16, Mtu.MTU_1024)) {
            final long[] work = new long[1];
            for (int i = 0; i < 300; i++) {
                sendAndCheck(r, i, rnd, true, work);
            }
            // each message is work for a cycle on both sides: the calls ran cycles, not only the engine threads
            assertTrue(work[0] >= 300, "work found by progress calls: " + work[0]);
            assertNull(r.a.engine().lastError());
            assertNull(r.b.engine().lastError());
        }
    }

    /**
     * Only a polling loop's calls (two within 50 us) make the engine thread step aside: calls 100 us apart or more,
     * as a housekeeping timer makes, leave it alone; calls back to back make it step aside, and it comes back 1 ms
     * after the last.
     */
    @Test
    void onlyALoopsCallsMakeTheEngineThreadStepAside() {
        try (Rig r = Rig.rc(ProgressMode.THREAD, 1 << 16, Mtu.MTU_1024)) {
            assertFalse(r.a.engine().drivenByCaller());
            for (int i = 0; i < 20; i++) {
                r.a.progress();
                assertFalse(r.a.engine().drivenByCaller(), "after call " + i + ", each 100 us or more after the last");
                final long until = System.nanoTime() + 100_000;
                while (System.nanoTime() < until) {
                    Thread.onSpinWait();
                }
            }
            while (!r.a.engine().drivenByCaller()) {   // back to back: the test's timeout fails it if never
                r.a.progress();
            }
            final long last = System.nanoTime();
            while (System.nanoTime() - last < 1_100_000) {
                Thread.onSpinWait();
            }
            assertFalse(r.a.engine().drivenByCaller(), "1.1 ms after the loop's last call");
            // and the engine thread drives again: a message goes through without calls
            sendAndCheck(r, 1, new Random(Rig.seed("ThreadProgressByCallerTest")), false, new long[1]);
        }
    }

    /**
     * The application drives, then stops calling progress right after B took a SEND (whose ACK B holds, to send it
     * with B's next request): B's engine thread takes over and sends it, so A's send completes; then traffic goes on
     * on the engine threads alone, and back on the calls. Empty polls do not drive here (they would by default,
     * {@code PollProgressTest}), so that only the engine threads move the devices once the calls stop.
     */
    @Test
    void theEngineThreadTakesOverWhenTheCallsStop() {
        final Random rnd = new Random(Rig.seed("ThreadProgressByCallerTest"));
        try (Rig r = new Rig(Rig.config("rxeA", ProgressMode.THREAD).pollProgress(false).build(),
                Rig.config("rxeB", ProgressMode.THREAD).pollProgress(false).build(), QpType.RC, 1 << 16, Mtu.MTU_1024,
                UnaryOperator.identity())) {
            final long[] work = new long[1];
            for (int round = 0; round < 3; round++) {
                for (int i = 0; i < 20; i++) {
                    sendAndCheck(r, round * 100 + i, rnd, true, work);
                }
                // the last SEND taken by a call, its ACK held; no call follows
                final int last = round * 100 + 50;
                assertEquals(1, r.qpB.postRecv(new RecvWr().wrId(1000 + last).sge(r.mrB, 0, MSG)));
                assertEquals(1, r.qpA.postSend(new SendWr().wrId(last).opcode(WrOpcode.SEND)
                        .sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, MSG)));
                final WorkCompletion recv = pollDriving(r, r.cqB, work);
                assertEquals(WcStatus.SUCCESS, recv.status());
                final WorkCompletion sent = r.poll(r.cqA, 20_000);   // no progress calls from here
                assertEquals(WcStatus.SUCCESS, sent.status(), () -> "the held ACK's send: " + sent);
                assertEquals(last, sent.wrId());
                for (int i = 60; i < 70; i++) {
                    sendAndCheck(r, round * 100 + i, rnd, false, work);
                }
            }
        }
    }

    /** Control actions (QP create, connect, destroy; MR register, deregister) from another thread while the calls drive. */
    @Test
    void controlActionsFromAnotherThreadWhileTheApplicationDrives() throws Exception {
        final Random rnd = new Random(Rig.seed("ThreadProgressByCallerTest"));
        try (Rig r = Rig.rc(ProgressMode.THREAD, 1 << 16, Mtu.MTU_1024)) {
            final AtomicBoolean stop = new AtomicBoolean();
            final AtomicReference<Throwable> failed = new AtomicReference<>();
            final AtomicInteger rounds = new AtomicInteger();
            final Thread control = new Thread(() -> {
                try {
                    while (!stop.get()) {
                        try (DmaRegion mem = DmaMemory.allocate(4096);
                                MemoryRegion mr = r.pdB.register(mem, 0, 4096, Rig.ALL_ACCESS);
                                QueuePair qp = r.pdB.createQp(QpInitAttributes.rc(r.cqB, r.cqB))) {
                            Rig.connect(qp, r.b, r.qpA, r.a, Mtu.MTU_1024, 0x5000, 0x6000, 14);
                            assertEquals(QpState.RTS, qp.state());
                            assertEquals(4096, mr.length());
                        }
                        rounds.incrementAndGet();
                    }
                } catch (final Throwable t) {
                    failed.set(t);
                }
            }, "control");
            control.start();
            final long[] work = new long[1];
            try {
                // messages until the control thread has done 20 rounds meanwhile (or failed)
                for (int i = 0; i < 200 || rounds.get() < 20 && failed.get() == null; i++) {
                    sendAndCheck(r, i, rnd, true, work);
                }
            } finally {
                stop.set(true);
                control.join(30_000);
            }
            assertNull(failed.get(), () -> "control thread: " + failed.get());
            assertTrue(rounds.get() >= 20, "control rounds: " + rounds.get());
            assertNull(r.b.engine().lastError());
        }
    }

    /** Two application threads calling progress on the same device at once, and its engine thread: cycles never overlap. */
    @Test
    void twoThreadsCallingProgressAtOnce() throws Exception {
        final Random rnd = new Random(Rig.seed("ThreadProgressByCallerTest"));
        try (Rig r = Rig.rc(ProgressMode.THREAD, 1 << 16, Mtu.MTU_1024)) {
            final AtomicBoolean stop = new AtomicBoolean();
            final long[] otherWork = new long[1];
            final Thread other = new Thread(() -> {
                while (!stop.get()) {
                    otherWork[0] += r.b.progress();
                    Thread.yield();
                }
            }, "second-caller");
            other.start();
            final long[] work = new long[1];
            try {
                for (int i = 0; i < 300; i++) {
                    sendAndCheck(r, i, rnd, true, work);
                }
            } finally {
                stop.set(true);
                other.join(30_000);
            }
            assertNull(r.a.engine().lastError());
            assertNull(r.b.engine().lastError());
        }
    }
}
