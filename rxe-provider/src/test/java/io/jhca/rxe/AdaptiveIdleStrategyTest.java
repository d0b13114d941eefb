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
    void theParkIsTheSleepersAndWorkItFindsStartsOver() {
        final java.util.List<Long> asked = new java.util.ArrayList<>();
        final boolean[] findWork = {false};
        final AdaptiveIdleStrategy s = new AdaptiveIdleStrategy(0, 1, 1_000, 4_000, nanos -> {
            asked.add(nanos);
            return findWork[0];
        });
        s.idle(0);
        for (int i = 0; i < 4; i++) {
            s.idle(0);
        }
        assertEquals(java.util.List.of(1_000L, 2_000L, 4_000L, 4_000L), asked, "the park doubles up to its longest");
        findWork[0] = true;
        s.idle(0);
        assertEquals("spin", s.phase(), "a sleeper that found work puts the strategy back to its start");
        assertEquals(4_000L, asked.get(asked.size() - 1));
        findWork[0] = false;
        s.idle(0);
        s.idle(0);
        assertEquals(1_000L, asked.get(asked.size() - 1), "after work the park starts from the shortest again");
    }

    @Test
    void theConfiguredParkReachesTheStrategy() {
        final java.util.List<Long> asked = new java.util.ArrayList<>();
        final org.agrona.concurrent.IdleStrategy s = RxeDeviceConfig.builder("a").address("127.0.0.1")
                .idlePark(7_000, 9_000).build().newIdleStrategy(nanos -> {
                    asked.add(nanos);
                    return false;
                });
        assertTrue(s instanceof AdaptiveIdleStrategy);
        assertEquals("park", parkPhase((AdaptiveIdleStrategy) s), "reached the park after the default 2 ms");
        assertEquals(7_000L, asked.get(0));
        assertThrows(IllegalArgumentException.class, () -> RxeDeviceConfig.builder("a").idlePark(0, 1));
        assertThrows(IllegalArgumentException.class, () -> RxeDeviceConfig.builder("a").idlePark(2, 1));
    }

    /** Idles until the strategy has parked once (the default spin and yield phases last 2 ms). */
    private static String parkPhase(final AdaptiveIdleStrategy s) {
        final long end = System.nanoTime() + 10_000_000_000L;
        while (!"park".equals(s.phase()) && System.nanoTime() < end) {
            s.idle(0);
        }
        s.idle(0);
        return s.phase();
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
