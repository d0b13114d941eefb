package io.jhca.rxe.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

class CqRingTest {

    @Test
    void fifoThenOverrunStaysReported() {
        final CqRing ring = new CqRing(3);
        assertEquals(4, ring.capacity(), "rounded up to a power of two");
        final WorkCompletion wc = new WorkCompletion();
        assertEquals(0, ring.poll(wc));
        for (int i = 0; i < 4; i++) {
            ring.claim().set(i, WcStatus.SUCCESS, WcOpcode.SEND, 0x11, i);
            ring.commit();
        }
        assertEquals(1, ring.poll(wc));
        assertEquals(0, wc.wrId());
        ring.claim().set(4, WcStatus.SUCCESS, WcOpcode.SEND, 0x11, 4);
        ring.commit();
        assertNull(ring.claim(), "full: the fifth outstanding completion overruns");
        assertTrue(ring.isOverrun());
        assertEquals(-1, ring.poll(wc), "every later poll reports the overrun");
        assertEquals(-1, ring.poll(wc));
    }

    @Test
    void producerAndConsumerThreads() throws Exception {
        final CqRing ring = new CqRing(64);
        final int n = 200_000;
        final Thread producer = new Thread(() -> {
            for (int i = 0; i < n; ) {
                final WorkCompletion slot = ring.claim();
                if (slot == null) {
                    throw new AssertionError("overrun");
                }
                slot.set(i, WcStatus.SUCCESS, WcOpcode.RECV, 1, i);
                ring.commit();
                i++;
                while (ring.size() > 48) {
                    Thread.onSpinWait(); // stay below capacity, as a CQ user must
                }
            }
        });
        producer.start();
        final WorkCompletion wc = new WorkCompletion();
        for (int i = 0; i < n; ) {
            if (ring.poll(wc) == 1) {
                assertEquals(i, wc.wrId());
                assertEquals(i, wc.byteLen());
                i++;
            }
        }
        producer.join();
    }
}
