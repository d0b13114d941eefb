package io.jhca.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;

import org.junit.jupiter.api.Test;

/** Eventfds on this machine's kernel: signal, non-blocking check, wait with timeout, wake-up across threads, poller. */
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
}
