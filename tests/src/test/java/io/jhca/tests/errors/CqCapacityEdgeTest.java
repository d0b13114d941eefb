package io.jhca.tests.errors;

import io.jhca.mlx5.Mlx5Context;
import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A CQ overruns exactly when one completion more than it holds arrives, never earlier, on every device pair and
 * for the receive CQ of each side: first exactly as many receive completions as the CQ holds arrive before anyone
 * polls (no CQ_ERR, all of them there, in order), then one more than that (CQ_ERR, every poll throws EOVERFLOW).
 *
 * <p>What a CQ holds is its reported capacity; on mlx5 one more: the ring has {@code roundup_pow_of_two(cqe + 1)}
 * CQEs and the reported cqe is one less (rdma-core mlx5 {@code align_queue_size(cqe + 1)}, kernel mlx5_ib
 * {@code create_cq}), while the hardware overruns only when every CQE of the ring is unconsumed.
 */
class CqCapacityEdgeTest {
    private static final int REQUESTED = 5;
    private static final int MAX_WR = 64;

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void overrunAtExactlyOnePastWhatTheCqHolds(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            for (int side = 0; side < 2; side++) {
                Peer a = h.peerA(PeerSpec.rc().cqDepth(REQUESTED).maxRecvWr(MAX_WR).maxSendWr(MAX_WR));
                Peer b = h.peerB(PeerSpec.rc().cqDepth(REQUESTED).maxRecvWr(MAX_WR).maxSendWr(MAX_WR));
                h.connect(a, b);
                Peer receiver = side == 0 ? b : a;
                Peer sender = side == 0 ? a : b;
                CompletionQueue cq = receiver.recvCq();
                int cap = cq.capacity();
                int holds = holds(cq);
                String what = "receive CQ of " + receiver.ctx().name() + " (requested " + REQUESTED + ", capacity " + cap
                        + ", holds " + holds + ")";
                assertTrue(cap >= REQUESTED, what);
                assertTrue(holds + 1 <= MAX_WR, what + ": too big for this test's queues");

                // 1. exactly what the CQ holds, none polled until all are in
                sendBurst(h, sender, receiver, holds, 0);
                // the receiver completed each receive before acknowledging it; a device model writes the CQE a duty
                // cycle after it sent the ACK: let both run a little before looking
                h.run(Duration.ofMillis(50));
                List<AsyncEvent> events = new ArrayList<>();
                drainEvents(receiver, events);
                assertTrue(events.stream().noneMatch(e -> e.type() == AsyncEvent.Type.CQ_ERR),
                        what + " overran with exactly " + holds + " completions: " + events);
                // (on a loaded machine the last CQEs may still be on their way: wait for them rather than fail)
                WorkCompletion[] wcs = h.await(cq, holds, holds + " receives in the " + what);
                for (int i = 0; i < holds; i++) {
                    Wcs.assertRecv(wcs[i], WcOpcode.RECV, i, receiver.qpn(), 8, null, "receive " + i + " of " + holds);
                }
                assertEquals(0, cq.poll(new WorkCompletion()), what + ": no more than " + holds + " completions");

                // 2. one more than the CQ holds
                sendBurst(h, sender, receiver, holds + 1, 100);
                boolean overran = waitForCqErr(h, receiver, events, Duration.ofSeconds(5));
                assertTrue(overran, what + ": no CQ_ERR after " + (holds + 1) + " completions; events " + events);
                VerbsException e = assertThrows(VerbsException.class, () -> cq.poll(new WorkCompletion()),
                        "polling the " + what + " after " + (holds + 1) + " completions");
                assertEquals(VerbsException.EOVERFLOW, e.errno(), e.getMessage());
            }
        }
    }

    /** Completions the CQ takes before it overruns. */
    static int holds(CompletionQueue cq) {
        return cq.context() instanceof Mlx5Context ? cq.capacity() + 1 : cq.capacity();
    }

    /**
     * {@code n} 8-byte SENDs into {@code n} receives, only the last signaled (the sender's CQ is small too), and waits
     * for that one: RC completes in order, so every SEND before it has been received and acknowledged.
     */
    private static void sendBurst(Harness h, Peer sender, Peer receiver, int n, long firstWrId) {
        RecvWr rwr = new RecvWr(1);
        for (int i = 0; i < n; i++) {
            rwr.wrId(firstWrId + i).sge(receiver.mr(), i * 64L, 64);
            assertEquals(1, receiver.qp().postRecv(rwr), "receive " + i + " posted");
        }
        SendWr wr = new SendWr(1);
        for (int i = 0; i < n; i++) {
            wr.wrId(firstWrId + i).opcode(WrOpcode.SEND).sendFlags(i == n - 1 ? SendFlags.SIGNALED : 0).sge(sender.mr(), 0, 8);
            assertEquals(1, sender.qp().postSend(wr), "SEND " + i + " posted");
        }
        if (firstWrId == 0) {
            Wcs.assertSuccess(h.await(sender.sendCq(), "the last of " + n + " SENDs"), WcOpcode.SEND, n - 1, sender.qpn(),
                    "the last of " + n + " SENDs");
        }
    }

    private static void drainEvents(Peer p, List<AsyncEvent> seen) {
        AsyncEvent ev;
        while ((ev = p.ctx().pollAsyncEvent()) != null) {
            seen.add(ev);
        }
    }

    private static boolean waitForCqErr(Harness h, Peer p, List<AsyncEvent> seen, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() - deadline < 0) {
            int before = seen.size();
            drainEvents(p, seen);
            for (int i = before; i < seen.size(); i++) {
                if (seen.get(i).type() == AsyncEvent.Type.CQ_ERR) {
                    return true;
                }
            }
            h.run(Duration.ofMillis(1));
        }
        return false;
    }
}
