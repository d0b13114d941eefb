package io.jhca.mlx5.vfio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;

import org.junit.jupiter.api.Test;

import io.jhca.vfio.EventFd;

/**
 * The vfio function's EQ line on this machine's kernel, a plain eventfd standing in for MSI-X vector 0's: an await
 * ends true by the vector, false by a wake-up from any thread, both drained when both are ready; a closed line
 * ignores wake-ups.
 */
class EqInterruptLineTest {

    /** Longer than the tests' default timeout: only a wake-up or the vector ends such an await in time. */
    private static final long FOREVER_MILLIS = 600_000;

    @Test
    void theVectorEndsTheAwaitAsAnInterrupt() {
        try (EventFd vector = EventFd.create(); EqInterruptLine line = new EqInterruptLine(vector)) {
            assertFalse(line.await(1), "nothing fired: a timeout");
            vector.signal(2);
            assertTrue(line.await(FOREVER_MILLIS), "the vector fired");
            assertFalse(line.await(1), "read and cleared");
            assertEquals(0, line.wakeUps());
        }
    }

    @Test
    void aWakeUpFromAnotherThreadEndsTheAwaitAsATimeout() throws Exception {
        try (EventFd vector = EventFd.create(); EqInterruptLine line = new EqInterruptLine(vector)) {
            Thread waker = new Thread(line::wakeUp); // before or during the await: it ends the current or the next
            waker.start();
            assertFalse(line.await(FOREVER_MILLIS), "woken, not fired");
            waker.join();
            assertEquals(1, line.wakeUps());
            assertFalse(line.await(1), "the wake-up was read");
            assertEquals(1, line.wakeUps());
        }
    }

    @Test
    void aWakeUpBesideAnInterruptLosesNeither() {
        try (EventFd vector = EventFd.create(); EqInterruptLine line = new EqInterruptLine(vector)) {
            vector.signal(1);
            line.wakeUp();
            assertTrue(line.await(FOREVER_MILLIS), "the interrupt is reported");
            assertEquals(1, line.wakeUps(), "and the wake-up counted");
            assertFalse(line.await(1), "both were read");
            assertEquals(1, line.wakeUps());
        }
    }

    @Test
    void aClosedLineIgnoresWakeUpsAndLeavesTheVectorOpen() {
        try (EventFd vector = EventFd.create()) {
            EqInterruptLine line = new EqInterruptLine(vector);
            line.close();
            line.close();
            line.wakeUp(); // the driver's stop after its function closed: no exception
            assertFalse(vector.isClosed(), "the vector's eventfd is the function's");
        }
    }

    /** await and wakeUp allocate nothing once warm (the poll's consumer is the line's own). */
    @Test
    void awaitAndWakeUpAllocateNothing() {
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().getId();
        try (EventFd vector = EventFd.create(); EqInterruptLine line = new EqInterruptLine(vector)) {
            int rounds = 10_000;
            for (int i = 0; i < 2 * rounds; i++) { // warm up
                line.wakeUp();
                line.await(FOREVER_MILLIS);
            }
            long before = threads.getThreadAllocatedBytes(self);
            for (int i = 0; i < rounds; i++) {
                line.wakeUp();
                line.await(FOREVER_MILLIS);
            }
            long bytes = threads.getThreadAllocatedBytes(self) - before;
            assertTrue(bytes < 4096, bytes + " bytes allocated by " + rounds + " wake-ups and awaits");
            assertEquals(3L * rounds, line.wakeUps());
        }
    }
}
