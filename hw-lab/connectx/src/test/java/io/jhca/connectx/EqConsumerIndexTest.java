package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;

/**
 * The EQ's consumer index as the model takes it from the two doorbell words (UAR + 0x40 arm, + 0x48 update). A
 * driver arms from one thread and updates from another; an arm written while the model is between its reads of the
 * two words is taken after the newer update. Its older index must neither shrink the EQ's free room (events would be
 * dropped as if the EQ were full) nor raise an interrupt for entries already consumed.
 */
class EqConsumerIndexTest {

    private static final int LOG_SIZE = 2;
    private static final int ENTRIES = 1 << LOG_SIZE;

    @Test
    void anOlderIndexTakenAfterANewerOneMovesNothingBack() throws Exception {
        try (HostDriver drv = HostDriver.open("eqci0", "127.0.0.54")) {
            ModelFunction fn = drv.fn.withInterrupts();
            drv.bringUp();
            HostDriver.Eq eq = drv.createEq(LOG_SIZE, 1L << EventType.PAGE_REQUEST);
            ConnectXModel model = fn.model();

            fill(model, eq);
            long doorbells = eqDoorbells(model);
            eq.updateCi();                                  // the newer index: all four consumed
            AwaitValue.of("the update taken", doorbells + 1, () -> eqDoorbells(model));
            long raised = fn.interruptsRaised();
            drv.bar0.putIntBe(drv.uar * HostDriver.PAGE + UarDoorbells.EQ_ARM, eq.eqn << 24); // the older arm: ci 0
            AwaitValue.of("the arm taken", doorbells + 2, () -> eqDoorbells(model));
            assertEquals(raised, fn.interruptsRaised(), "no interrupt for entries the driver consumed");

            fill(model, eq);                                // a full ring's worth again: room for every one
            assertEquals(0, model.counters().get(ModelCounters.Counter.EQES_DROPPED), model.counters().toString());
            assertEquals(2L * ENTRIES, model.counters().get(ModelCounters.Counter.EQES));
            assertTrue(fn.interruptsRaised() > raised, "the arm still stands for the next entry");
        }
    }

    /** Page requests until the EQ holds {@link #ENTRIES} new entries; each is consumed and checked. */
    private static void fill(ConnectXModel model, HostDriver.Eq eq) {
        for (int i = 0; i < ENTRIES; i++) {
            model.requestPages(1); // written on the firmware thread before this returns
        }
        for (int i = 0; i < ENTRIES; i++) {
            int off = eq.next();
            assertTrue(off >= 0, "entry " + i + " of the fill is the driver's");
            assertEquals(EventType.PAGE_REQUEST, eq.ring.getByte(off + Eqe.TYPE_OFFSET));
        }
        assertEquals(-1, eq.next(), "no more entries than were raised");
    }

    private static long eqDoorbells(ConnectXModel model) {
        return model.counters().get(ModelCounters.Counter.EQ_DOORBELLS);
    }
}
