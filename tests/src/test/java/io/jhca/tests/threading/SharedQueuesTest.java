package io.jhca.tests.threading;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.RcParams;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.CqFlags;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The threading contract on every provider: QPs and CQs shared by several threads deliver every WR exactly once
 * (posting and polling lock), and objects created single-threaded refuse a second thread.
 */
class SharedQueuesTest {

    private static final int SENDERS = 4;
    private static final int RECEIVERS = 2;
    private static final int POLLERS = 2;
    private static final int PER_SENDER = 300;
    private static final int TOTAL = SENDERS * PER_SENDER;
    private static final int LENGTH = 64;

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void threadsPostingAndPollingSharedObjectsDeliverEveryWrOnce(DevicePair pair) throws Exception {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().maxSendWr(64).cqDepth(4096));
            Peer b = h.peerB(PeerSpec.rc().maxRecvWr(256).cqDepth(4096));
            // a SEND that finds no receive yet waits (rnr_retry 7 retries forever) instead of failing
            h.connect(a, b, RcParams.defaults().rnrRetry(7));
            AtomicIntegerArray sent = new AtomicIntegerArray(TOTAL);
            AtomicIntegerArray received = new AtomicIntegerArray(TOTAL);
            AtomicReference<Throwable> failure = new AtomicReference<>();
            AtomicBoolean done = new AtomicBoolean();
            CountDownLatch go = new CountDownLatch(1);
            List<Thread> threads = new ArrayList<>();
            for (int s = 0; s < SENDERS; s++) {
                int id = s;
                threads.add(worker("sender-" + s, go, failure, () -> send(a, id)));
            }
            for (int r = 0; r < RECEIVERS; r++) {
                int id = r;
                threads.add(worker("receiver-" + r, go, failure, () -> receive(b, id)));
            }
            for (int p = 0; p < POLLERS; p++) {
                threads.add(worker("send-poller-" + p, go, failure, () -> poll(h, a.sendCq(), sent, done, WcOpcode.SEND)));
                threads.add(worker("recv-poller-" + p, go, failure, () -> poll(h, b.recvCq(), received, done, WcOpcode.RECV)));
            }
            go.countDown();
            // a generous bound that only a wedged queue reaches (the check is on progress, not on speed)
            long deadline = System.nanoTime() + 100_000_000_000L;
            while (failure.get() == null && !(allSeen(sent) && allSeen(received))) {
                if (System.nanoTime() - deadline > 0) {
                    failure.compareAndSet(null, new AssertionError("wedged after 100 s: send completions "
                            + tally(sent) + "; receive completions " + tally(received)));
                }
                Thread.sleep(1);
            }
            done.set(true);
            for (Thread t : threads) {
                t.join();
            }
            if (failure.get() != null) {
                throw new AssertionError(pair.label() + ": " + failure.get(), failure.get());
            }
            for (int i = 0; i < TOTAL; i++) {
                assertEquals(1, sent.get(i), "send completions of wr_id " + i);
                assertEquals(1, received.get(i), "receive completions of wr_id " + i);
            }
            WorkCompletion wc = new WorkCompletion();
            assertEquals(0, a.sendCq().poll(wc), () -> "no completion beyond the " + TOTAL + " WRs: " + wc);
            assertEquals(0, b.recvCq().poll(wc), () -> "no completion beyond the " + TOTAL + " receives: " + wc);
        }
    }

    /** "n of TOTAL wr_ids seen, missing [...], more than once [...]": what a wedge looks like. */
    private static String tally(AtomicIntegerArray counts) {
        int seen = 0;
        List<Integer> missing = new ArrayList<>();
        List<String> repeated = new ArrayList<>();
        for (int i = 0; i < counts.length(); i++) {
            int c = counts.get(i);
            seen += c > 0 ? 1 : 0;
            if (c == 0 && missing.size() < 16) {
                missing.add(i);
            }
            if (c > 1 && repeated.size() < 16) {
                repeated.add(i + "x" + c);
            }
        }
        return seen + " of " + TOTAL + " wr_ids seen, missing " + missing + ", more than once " + repeated;
    }

    private static boolean allSeen(AtomicIntegerArray counts) {
        for (int i = 0; i < counts.length(); i++) {
            if (counts.get(i) == 0) {
                return false;
            }
        }
        return true;
    }

    private interface Body {
        void run() throws Exception;
    }

    private static Thread worker(String name, CountDownLatch go, AtomicReference<Throwable> failure, Body body) {
        Thread t = new Thread(() -> {
            try {
                go.await();
                body.run();
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }, name);
        t.start();
        return t;
    }

    /** PER_SENDER signaled SENDs with wr_ids id*PER_SENDER.., by postSend and builder batches in turn. */
    private static void send(Peer a, int id) {
        QueuePair qp = a.qp();
        SendWr wr = new SendWr().opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(a.mr(), (long) id * LENGTH, LENGTH);
        for (int i = 0; i < PER_SENDER; ) {
            long wrId = (long) id * PER_SENDER + i;
            boolean posted;
            if (i % 2 == 0) {
                posted = qp.postSend(wr.wrId(wrId)) == 1;
            } else {
                SendQueue sq = qp.sendQueue().start();
                sq.wrId(wrId).flags(SendFlags.SIGNALED).send().sge(a.mr(), (long) id * LENGTH, LENGTH);
                posted = sq.complete() == 0;   // ENOMEM: the queue is full, nothing of the batch was posted
            }
            if (posted) {
                i++;
            } else {
                Thread.yield();   // the queue is full: let the device (and the pollers) run
            }
        }
    }

    /** Receives with wr_ids id, id+RECEIVERS, ... up to TOTAL. */
    private static void receive(Peer b, int id) {
        RecvWr wr = new RecvWr().sge(b.mr(), 4096L + (long) id * LENGTH, LENGTH);
        for (int i = id; i < TOTAL; ) {
            if (b.qp().postRecv(wr.wrId(i)) == 1) {
                i += RECEIVERS;
            } else {
                Thread.yield();
            }
        }
    }

    private static void poll(Harness h, CompletionQueue cq, AtomicIntegerArray counts, AtomicBoolean done, WcOpcode op) {
        WorkCompletion wc = new WorkCompletion();
        while (!done.get()) {
            if (cq.poll(wc) == 1) {
                if (wc.status() != WcStatus.SUCCESS || wc.opcode() != op) {
                    fail(cq.describe() + ": unexpected completion " + wc);
                }
                if (wc.wrId() < 0 || wc.wrId() >= TOTAL) {
                    fail(cq.describe() + ": wr_id out of range " + wc);
                }
                counts.incrementAndGet((int) wc.wrId());
            } else if (h.progress() == 0) {   // CALLER mode: the pollers drive the engines (serialized)
                Thread.yield();
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void singleThreadedObjectsRefuseASecondThread(DevicePair pair) throws Exception {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc());
            CompletionQueue cq = h.track(h.a().createCq(16, CqFlags.SINGLE_THREADED));
            QueuePair qp = h.track(a.pd().createQp(QpInitAttributes.rc(cq, cq).singleThreaded()));
            qp.modify(QpAttributes.toInit(1));
            RecvWr wr = new RecvWr().wrId(1).sge(a.mr(), 0, 64);
            assertEquals(1, qp.postRecv(wr));
            WorkCompletion wc = new WorkCompletion();
            assertEquals(0, cq.poll(wc));
            AtomicReference<Throwable> post = new AtomicReference<>();
            AtomicReference<Throwable> poll = new AtomicReference<>();
            Thread other = new Thread(() -> {
                try {
                    qp.postRecv(wr);
                } catch (Throwable e) {
                    post.set(e);
                }
                try {
                    cq.poll(new WorkCompletion());
                } catch (Throwable e) {
                    poll.set(e);
                }
            }, "second-thread");
            other.start();
            other.join();
            assertRefused(post.get(), qp.describe());
            assertRefused(poll.get(), cq.describe());
            assertEquals(1, qp.postRecv(wr.wrId(2)), "the owner still posts");
        }
    }

    private static void assertRefused(Throwable t, String object) {
        assertTrue(t instanceof IllegalStateException, () -> "expected IllegalStateException, got " + t);
        assertTrue(t.getMessage().contains(object) && t.getMessage().contains("\"second-thread\""), t.getMessage());
        assertTrue(!(t instanceof VerbsException), t.getMessage());
    }
}
