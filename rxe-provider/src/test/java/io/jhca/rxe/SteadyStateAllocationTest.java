package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import io.jhca.testkit.ChildJvm;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

/**
 * In CALLER mode everything (posting, both engines, polling) runs on the test thread, so the thread's allocation
 * counter, read around each library call, measures the whole data path: after warm-up, rounds of 5000
 * SEND/RECV + WRITE + READ (35000 packets) allocate nothing. (The engine thread of THREAD mode runs the same code.)
 * Compiled, and interpreted (where no escape analysis removes an object the code creates, so a JDK whose JIT inlines
 * differently still makes no garbage).
 */
class SteadyStateAllocationTest {

    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /**
     * Both modes: with thread progress this thread's progress calls and empty polls run duty cycles too (the engine
     * threads' own allocations are theirs, not counted here).
     */
    @ParameterizedTest
    @EnumSource(ProgressMode.class)
    void dataPathAllocatesNothing(final ProgressMode mode) {
        try (Rig r = Rig.rc(mode, 1 << 20, Mtu.MTU_1024)) {
            final RecvWr recv = new RecvWr().wrId(1).sge(r.mrB, 0, 8192);
            final WorkCompletion wc = new WorkCompletion();
            final long[] bytes = new long[4];
            run(r, recv, wc, 20_000, bytes); // warm up (JIT)
            // A per-message allocation shows in every round; a one-off of the JVM itself (a deoptimization, a call
            // site relinked) in one round at most. So: one clean round of three, and no round above 4 KiB.
            final StringBuilder rounds = new StringBuilder();
            boolean clean = false;
            long worst = 0;
            for (int k = 0; k < 3; k++) {
                java.util.Arrays.fill(bytes, 0);
                run(r, recv, wc, 5_000, bytes);
                rounds.append(java.util.Arrays.toString(bytes)).append(' ');
                clean |= bytes[0] + bytes[1] + bytes[2] + bytes[3] == 0;
                worst = Math.max(worst, bytes[0] + bytes[1] + bytes[2] + bytes[3]);
            }
            assertTrue(clean && worst < 4096, "bytes allocated by [posting, engine A, engine B, polling] in three "
                    + "rounds of 5000: " + rounds);
        }
    }

    /**
     * Two QPs of one device to one peer: each holds its own peer address object, and their packets leave in turns
     * (GSO bursts of four 1 KiB WRITE packets on the rigs' loopback addresses). The link compares the peer by value,
     * so the turns rewrite no socket address: the sending engine allocates nothing (12 B a burst before).
     */
    @Test
    void twoQpsToOnePeerAllocateNothing() {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 20, Mtu.MTU_1024)) {
            final QueuePair second = r.pdA.createQp(QpInitAttributes.of(QpType.RC, r.cqA, r.cqA).maxSendWr(256)
                    .maxRecvWr(16).maxSendSge(1).maxRecvSge(1));
            final QueuePair secondPeer = r.pdB.createQp(QpInitAttributes.of(QpType.RC, r.cqB, r.cqB).maxSendWr(16)
                    .maxRecvWr(16).maxSendSge(1).maxRecvSge(1));
            try {
                Rig.connect(second, r.a, secondPeer, r.b, Mtu.MTU_1024, 0x3000, 0x4000, 14);
                Rig.connect(secondPeer, r.b, second, r.a, Mtu.MTU_1024, 0x4000, 0x3000, 14);
                final QueuePair[] qps = {r.qpA, second};
                final WorkCompletion wc = new WorkCompletion();
                final long[] bytes = new long[1];
                writeInTurns(r, qps, wc, 20_000, bytes); // warm up (JIT)
                final StringBuilder rounds = new StringBuilder();
                boolean clean = false;
                for (int k = 0; k < 3; k++) {
                    bytes[0] = 0;
                    writeInTurns(r, qps, wc, 5_000, bytes);
                    rounds.append(bytes[0]).append(' ');
                    clean |= bytes[0] == 0;
                }
                assertTrue(clean, "bytes allocated by engine A in three rounds of 5000 WRITEs on each of two QPs: "
                        + rounds);
                assertEquals(0, r.a.counters().get(io.jhca.rxe.transport.RxeCounters.Counter.RETRANSMITTED_PKTS),
                        "resent packets: " + r.a.counters());
            } finally {
                second.close();
                secondPeer.close();
            }
        }
    }

    /**
     * {@code rounds} times: a signaled 4 KiB RDMA WRITE on each of {@code qps}, both engines driven until both
     * complete; adds the bytes this thread allocated in A's progress to bytes[0].
     */
    private static void writeInTurns(final Rig r, final QueuePair[] qps, final WorkCompletion wc, final int rounds,
            final long[] bytes) {
        final long self = Thread.currentThread().getId();
        for (int i = 0; i < rounds; i++) {
            for (int q = 0; q < qps.length; q++) {
                final SendQueue sq = qps[q].sendQueue();
                sq.start();
                sq.wrId(q).flags(SendFlags.SIGNALED).rdmaWrite(r.mrB.rkey(), r.mrB.address() + q * 8192L)
                        .sge(r.mrA, q * 8192L, 4096);
                sq.complete();
            }
            int done = 0;
            while (done < qps.length) {
                final long before = THREADS.getThreadAllocatedBytes(self);
                r.a.progress();
                bytes[0] += THREADS.getThreadAllocatedBytes(self) - before;
                r.b.progress();
                if (r.cqA.poll(wc) == 1) {
                    if (wc.status() != WcStatus.SUCCESS) {
                        throw new AssertionError(wc.toString());
                    }
                    done++;
                }
            }
        }
    }

    /** The same rounds in a child JVM with -Xint ({@link InterpretedAllocationProbe}): every round 0 bytes. */
    @Test
    void interpretedDataPathAllocatesNothing() throws Exception {
        final ChildJvm.Result child = ChildJvm.run(Duration.ofSeconds(50), List.of("-Xint"),
                InterpretedAllocationProbe.class);
        assertEquals(0, child.exitValue(), "the interpreted probe failed:\n" + child.output());
        final List<String> rounds = child.lines("ROUND ");
        assertEquals(3, rounds.size(), child.output());
        for (final String r : rounds) {
            assertEquals("ROUND [0, 0, 0, 0]", r, "bytes allocated by [posting, engine A, engine B, polling] in"
                    + " 50 interpreted rounds:\n" + child.output());
        }
    }

    /**
     * {@code rounds} times: a receive posted on B, a SEND, an RDMA WRITE and a signaled RDMA READ from A by the
     * builder, both engines driven until A's READ and B's receive complete; adds the bytes this thread allocated
     * posting, in A's and B's progress and polling to bytes[0..3].
     */
    static void run(final Rig r, final RecvWr recv, final WorkCompletion wc, final int rounds, final long[] bytes) {
        final long self = Thread.currentThread().getId();
        final SendQueue sq = r.qpA.sendQueue();
        for (int i = 0; i < rounds; i++) {
            long before = THREADS.getThreadAllocatedBytes(self);
            r.qpB.postRecv(recv);
            sq.start();
            sq.wrId(i).flags(0).send().sge(r.mrA, 0, 3000);
            sq.wrId(i).flags(0).rdmaWrite(r.mrB.rkey(), r.mrB.address() + 65536).sge(r.mrA, 4096, 2000);
            sq.wrId(i).flags(SendFlags.SIGNALED).rdmaRead(r.mrB.rkey(), r.mrB.address() + 131072).sge(r.mrA, 8192, 1500);
            sq.complete();
            long after = THREADS.getThreadAllocatedBytes(self);
            bytes[0] += after - before;
            int sendDone = 0;
            int recvDone = 0;
            while (sendDone == 0 || recvDone == 0) {
                before = THREADS.getThreadAllocatedBytes(self);
                r.a.progress();
                after = THREADS.getThreadAllocatedBytes(self);
                bytes[1] += after - before;
                r.b.progress();
                before = THREADS.getThreadAllocatedBytes(self);
                bytes[2] += before - after;
                if (r.cqA.poll(wc) == 1) {
                    if (wc.status() != WcStatus.SUCCESS) {
                        throw new AssertionError(wc.toString());
                    }
                    sendDone++;
                }
                if (r.cqB.poll(wc) == 1) {
                    recvDone++;
                }
                bytes[3] += THREADS.getThreadAllocatedBytes(self) - before;
            }
        }
    }
}
