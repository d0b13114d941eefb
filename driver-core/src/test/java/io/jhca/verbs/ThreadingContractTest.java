package io.jhca.verbs;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.fake.FakeQp;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The threading contract of QPs and CQs, enforced in the base classes: shared objects serialize posts and polls
 * (a builder batch belongs to the thread that started it), single-threaded objects refuse a second thread.
 */
class ThreadingContractTest extends VerbsTestSupport {
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private MemoryRegion mr;

    @BeforeEach
    void resources() {
        pd = track(ctx.allocatePd());
        cq = track(ctx.createCq(64));
        DmaRegion mem = memory(65536);
        mr = track(pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE));
    }

    /** Runs {@code r} on a new thread named {@code name} and returns what it threw (null if nothing). */
    private static Throwable onThread(String name, Runnable r) throws InterruptedException {
        AtomicReference<Throwable> thrown = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                r.run();
            } catch (Throwable e) {
                thrown.set(e);
            }
        }, name);
        t.start();
        t.join();
        return thrown.get();
    }

    private static void assertRefused(Throwable t, String... fragments) {
        assertTrue(t instanceof IllegalStateException, () -> "expected IllegalStateException, got " + t);
        for (String f : fragments) {
            assertTrue(t.getMessage().contains(f), () -> "message '" + t.getMessage() + "' lacks '" + f + "'");
        }
    }

    @Test
    void aSingleThreadedQpRefusesASecondThreadOnEachQueue() throws Exception {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).singleThreaded());
        assertTrue(qp.singleThreaded());
        SendWr wr = new SendWr().opcode(WrOpcode.SEND).sge(mr, 0, 8);
        String me = Thread.currentThread().getName();
        assertEquals(1, qp.postSend(wr), "the first thread to post owns the send queue");
        Throwable t = onThread("intruder", () -> qp.postSend(wr));
        assertRefused(t, qp.describe(), "send queue", "\"" + me + "\"", "\"intruder\"");
        t = onThread("intruder", () -> qp.sendQueue().start());
        assertRefused(t, qp.describe(), "\"intruder\"");
        assertEquals(1, ((FakeQp) qp).sendsQueued, "the refused posts touched nothing");
        // the receive queue has its own owner: here another thread
        assertEquals(null, onThread("receiver", () -> qp.postRecv(new RecvWr().sge(mr, 0, 8))));
        t = onThread("intruder", () -> qp.postRecv(new RecvWr().sge(mr, 0, 8)));
        assertRefused(t, "receive queue", "\"receiver\"", "\"intruder\"");
        assertThrows(IllegalStateException.class, () -> qp.postRecv(new RecvWr().sge(mr, 0, 8)));
        // the owner keeps working
        assertEquals(1, qp.postSend(wr));
        qp.sendQueue().start().send().sge(mr, 0, 8);
        assertEquals(0, qp.sendQueue().complete());
    }

    @Test
    void aSingleThreadedCqRefusesASecondPoller() throws Exception {
        CompletionQueue single = track(ctx.createCq(16, CqFlags.SINGLE_THREADED));
        assertTrue(single.singleThreaded());
        assertFalse(cq.singleThreaded());
        WorkCompletion wc = new WorkCompletion();
        assertEquals(0, single.poll(wc));
        String me = Thread.currentThread().getName();
        assertRefused(onThread("intruder", () -> single.poll(wc)), single.describe(), "\"" + me + "\"", "\"intruder\"");
        assertRefused(onThread("intruder", () -> single.poll(new WorkCompletion[] {wc})), "\"intruder\"");
        assertEquals(0, single.poll(wc));
        assertEquals(null, onThread("other", () -> cq.poll(wc)), "a shared CQ takes any thread");
        refused(VerbsException.EINVAL, "unknown flags 0x2", () -> ctx.createCq(16, 2));
    }

    @Test
    void aBuilderBatchBelongsToTheThreadThatStartedIt() throws Exception {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq));
        FakeQp fq = (FakeQp) qp;
        SendQueue sq = qp.sendQueue();
        sq.start();
        sq.wrId(1).send();
        String me = Thread.currentThread().getName();
        Throwable t = onThread("intruder", () -> sq.sge(mr, 0, 8));
        assertRefused(t, qp.describe(), "sge()", "\"intruder\"", "\"" + me + "\" has a batch open");
        assertRefused(onThread("intruder", sq::complete), "complete()");
        assertRefused(onThread("intruder", sq::abort), "abort()");
        refused(VerbsException.EINVAL, "while this thread has a send builder batch open",
                () -> qp.postSend(new SendWr().opcode(WrOpcode.SEND).sge(mr, 0, 8)));
        sq.sge(mr, 0, 8);
        assertEquals(0, sq.complete());
        assertEquals(1, fq.sendsQueued);
    }

    @Test
    void aPostFromAnotherThreadWaitsForTheOpenBatch() throws Exception {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq));
        FakeQp fq = (FakeQp) qp;
        SendQueue sq = qp.sendQueue();
        sq.start();
        sq.wrId(1).send().sge(mr, 0, 8);
        AtomicReference<Integer> posted = new AtomicReference<>();
        Thread poster = new Thread(() -> posted.set(qp.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sge(mr, 0, 8))));
        poster.start();
        // bounded wait for the poster to park on the send queue's lock (timed parks: no timing assertion)
        while (poster.getState() != Thread.State.TIMED_WAITING && poster.isAlive()) {
            Thread.onSpinWait();
        }
        assertEquals(null, posted.get(), "the post waits while the batch is open");
        assertEquals(0, fq.sendDoorbells);
        assertEquals(0, sq.complete());
        poster.join();
        assertEquals(1, posted.get());
        assertEquals(2, fq.sendsQueued);
        assertEquals(2, fq.sendDoorbells);
    }

    @Test
    void threadsPostingOnASharedQpLoseNoWr() throws Exception {
        int threads = 4;
        int rounds = 1024;
        int every = 32;   // each thread keeps one batch in 32 and aborts the others: 32 WRs per thread, 128 in all
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendWr(128).maxRecvWr(128));
        FakeQp fq = (FakeQp) qp;
        CountDownLatch go = new CountDownLatch(1);
        List<Thread> workers = new ArrayList<>();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        for (int t = 0; t < threads; t++) {
            int id = t;
            Thread w = new Thread(() -> {
                try {
                    go.await();
                    SendWr wr = new SendWr().opcode(WrOpcode.SEND).sge(mr, 0, 8);
                    RecvWr rwr = new RecvWr().sge(mr, 0, 8);
                    for (int i = 0; i < rounds; i++) {
                        if (i % every != 0) {
                            // a batch dropped again: the fake rolls its counter back to the batch's start
                            qp.sendQueue().start().wrId(i).send().sge(mr, 0, 8).abort();
                        } else if ((i / every + id) % 2 == 0) {
                            assertEquals(1, qp.postSend(wr.wrId(id * rounds + i)));
                        } else {
                            SendQueue sq = qp.sendQueue().start();
                            sq.wrId(id * rounds + i).send().sge(mr, 0, 8);
                            assertEquals(0, sq.complete());
                        }
                        if (i % every == 0) {
                            assertEquals(1, qp.postRecv(rwr.wrId(i)));
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "poster-" + t);
            w.start();
            workers.add(w);
        }
        go.countDown();
        for (Thread w : workers) {
            w.join();
        }
        if (failure.get() != null) {
            throw new AssertionError(failure.get());
        }
        // the fake's counters are plain ints: only serialized posts add up exactly
        int wrs = threads * rounds / every;
        assertEquals(wrs, fq.sendsQueued);
        assertEquals(wrs, fq.sendDoorbells);
        assertEquals(wrs, fq.recvsQueued);
        assertEquals(wrs, fq.recvDoorbells);
    }
}
