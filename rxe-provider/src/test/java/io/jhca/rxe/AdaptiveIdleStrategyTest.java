package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The phases of the engine thread's default idle strategy, and its reset on work. No timing is asserted. */
class AdaptiveIdleStrategyTest {

    @Test
    void spinsThenYieldsThenParksAndStartsOverOnWork() {
        // no spin phase and a 1 ns yield phase: the phases follow from the clock alone
        final AdaptiveIdleStrategy s = new AdaptiveIdleStrategy(0, 1, 1_000, 2_000);
        assertEquals("spin", s.phase(), "before any idle call");
        s.idle(0);
        s.idle(0); // at least 1 ns has passed since the first call
        assertEquals("park", s.phase());
        s.idle(1); // work: back to the start
        assertEquals("spin", s.phase());
        final AdaptiveIdleStrategy longSpin = new AdaptiveIdleStrategy(Long.MAX_VALUE / 2, Long.MAX_VALUE / 2, 1, 1);
        for (int i = 0; i < 1000; i++) {
            longSpin.idle(0);
        }
        assertEquals("spin", longSpin.phase(), "within its spin time it only spins");
        assertEquals("adaptive", s.alias());
    }

    @Test
    void isTheDefaultOfEngineThreads() {
        final RxeDeviceConfig c = RxeDeviceConfig.builder("a").address("127.0.0.1").build();
        assertEquals("adaptive", c.idleStrategyName());
        assertTrue(c.newIdleStrategy() instanceof AdaptiveIdleStrategy);
        assertTrue(RxeDeviceConfig.builder("a").address("127.0.0.1").idleStrategy("backoff").build().newIdleStrategy()
                instanceof org.agrona.concurrent.BackoffIdleStrategy);
    }

    @Test
    void refusesPhasesOutOfOrder() {
        assertThrows(IllegalArgumentException.class, () -> new AdaptiveIdleStrategy(10, 5, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new AdaptiveIdleStrategy(0, 0, 0, 1));
        assertThrows(IllegalArgumentException.class, () -> new AdaptiveIdleStrategy(0, 0, 2, 1));
        assertThrows(IllegalArgumentException.class, () -> new AdaptiveIdleStrategy(-1, 0, 1, 1));
    }
}
