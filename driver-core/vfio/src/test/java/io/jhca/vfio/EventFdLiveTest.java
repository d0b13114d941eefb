package io.jhca.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import org.junit.jupiter.api.Test;

/**
 * Eventfds on this machine's kernel: signal, non-blocking check, wait with timeout, wake-up across threads, signals
 * from several threads while the owner reads, poller.
 */
class EventFdLiveTest {

    @Test
    void signalPollAndAwaitRoundTrip() {
        try (EventFd e = EventFd.create()) {
            assertEquals(0, e.poll(), "fresh eventfd has nothing");
            assertEquals(0, e.await(0), "zero timeout does not wait");
            assertEquals(0, e.await(5), "short timeout expires");
            e.signal(3);
            e.signal(4);
            assertEquals(7, e.poll(), "signals add up and are read at once");
            assertEquals(0, e.poll(), "reading clears");
            assertEquals(true, e.signalIfOpen(2), "an open eventfd is signalled");
            assertEquals(2, e.poll());
        }
    }

    @Test
    void awaitWakesWhenAnotherThreadSignals() throws Exception {
        try (EventFd e = EventFd.create()) {
            final CountDownLatch started = new CountDownLatch(1);
            final Thread t = new Thread(() -> {
                started.countDown();
                e.signal(1);
            });
            t.start();
            started.await();
            assertEquals(1, e.await(-1), "waits as long as it takes");
            t.join();
        }
    }

    /**
     * Signals from other threads while the owner reads: each signal's count reaches the kernel as given, so the owner
     * reads exactly their sum (a signal written from the owner's read buffer could carry the owner's last count, or 0).
     * Several rounds, since such a race need not show in one.
     */
    @Test
    void signalsFromOtherThreadsWhileTheOwnerReadsAllArriveExactly() throws Exception {
        final int threads = 4;
        final int signals = 20_000;
        for (int round = 1; round <= 5; round++) {
            assertEquals((long) threads * signals, readWhileSignalled(threads, signals),
                    "round " + round + ": signalled " + threads + " x " + signals + " x 1");
        }
    }

    /** What the owner reads while {@code threads} threads, let go at once, signal 1 {@code signals} times each. */
    private static long readWhileSignalled(final int threads, final int signals) throws Exception {
        try (EventFd e = EventFd.create()) {
            final CountDownLatch go = new CountDownLatch(1);
            final CountDownLatch finished = new CountDownLatch(threads);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final List<Thread> signallers = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                final Thread s = new Thread(() -> {
                    try {
                        go.await();
                        for (int i = 0; i < signals; i++) {
                            e.signal(1);
                        }
                    } catch (Throwable x) {
                        failure.compareAndSet(null, x);
                    } finally {
                        finished.countDown();
                    }
                });
                signallers.add(s);
                s.start();
            }
            go.countDown();
            long read = 0;
            boolean await = false;
            while (finished.getCount() > 0) {
                read += await ? e.await(1) : e.poll(); // both ways of reading, alternately
                await = !await;
            }
            for (final Thread s : signallers) {
                s.join();
            }
            read += e.poll(); // what came after the loop's last read
            assertEquals(null, failure.get(), "a signaller failed");
            return read;
        }
    }

    @Test
    void pollerReportsExactlyTheSignalledOnes() {
        try (EventFd a = EventFd.create(); EventFd b = EventFd.create(); EventFd c = EventFd.create()) {
            final EventFdPoller poller = new EventFdPoller();
            poller.add(a);
            poller.add(b);
            poller.add(c);
            final List<EventFd> seen = new ArrayList<>();
            assertEquals(0, poller.select(1, seen::add));
            b.signal(1);
            c.signal(2);
            assertEquals(2, poller.select(10_000, seen::add));
            assertEquals(List.of(b, c), seen);
            assertEquals(1, b.poll());
            assertEquals(2, c.poll());
            poller.remove(c);
            assertEquals(2, poller.size());
        }
    }

    @Test
    void closedEventFdRefusesUse() {
        final EventFd e = EventFd.create();
        e.close();
        e.close();
        final VfioException ex = assertThrows(VfioException.class, e::poll);
        assertEquals("eventfd: read: the eventfd is closed", ex.getMessage());
        assertThrows(VfioException.class, () -> e.signal(1));
        assertThrows(VfioException.class, e::fd);
    }

    /** A signal after close throws before any write(2): the fd number may already be another eventfd's. */
    @Test
    void signalAfterCloseThrowsAndWritesNothing() {
        final FakeKernel kernel = new FakeKernel(); // real eventfds, every call counted
        final EventFd closed = new EventFd(kernel, "eventfd");
        closed.close();
        try (EventFd next = EventFd.create()) { // likely given the number the close released
            final int calls = kernel.calls();
            final VfioException ex = assertThrows(VfioException.class, () -> closed.signal(1));
            assertEquals("eventfd: write: the eventfd is closed", ex.getMessage());
            assertEquals(false, closed.signalIfOpen(1), "nothing to signal once closed");
            assertEquals(calls, kernel.calls(), "no call reached the kernel");
            assertEquals(0, next.poll(), "the eventfd opened since was not signalled");
        }
    }
}
