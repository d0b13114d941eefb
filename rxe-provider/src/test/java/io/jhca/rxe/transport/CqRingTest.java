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
    void armingFiresOncePerArmAndSolicitedOnlyWaitsForSolicitedOrError() {
        final CqRing ring = new CqRing(64);
        final int[] events = new int[1];
        ring.onEvent(() -> events[0]++);
        commit(ring, 1, WcStatus.SUCCESS, false);
        assertEquals(0, events[0], "unarmed: no event");
        ring.arm(false);
        commit(ring, 2, WcStatus.SUCCESS, false);
        commit(ring, 3, WcStatus.SUCCESS, false);
        assertEquals(1, events[0], "one arm, one event, however many completions follow");
        assertEquals(CqRing.DISARMED, ring.armed());
        ring.arm(true);
        commit(ring, 4, WcStatus.SUCCESS, false);
        assertEquals(1, events[0], "solicited-only ignores an unsolicited success");
        commit(ring, 5, WcStatus.SUCCESS, true);
        assertEquals(2, events[0], "solicited-only fires on a solicited one");
        ring.arm(true);
        commit(ring, 6, WcStatus.REM_ACCESS_ERR, false);
        assertEquals(3, events[0], "solicited-only fires on an error completion");
        ring.arm(true);
        ring.arm(false);
        assertEquals(CqRing.ARMED_NEXT, ring.armed(), "next-completion arming wins over solicited-only");
        ring.arm(true);
        assertEquals(CqRing.ARMED_NEXT, ring.armed(), "and is not narrowed by a later solicited-only arm");
        commit(ring, 7, WcStatus.SUCCESS, false);
        assertEquals(4, events[0]);
    }

    private static void commit(final CqRing ring, final long wrId, final WcStatus status, final boolean se) {
        ring.claim().set(wrId, status, WcOpcode.RECV, 0x11, 0).solicited(se);
        ring.commit();
    }

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
