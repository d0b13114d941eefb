package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * An INLINE post racing the deregistration of its MR and the close of the MR's region must never crash the JVM:
 * the QP holds the MR while it copies. A crash is a SIGSEGV, so the race runs in a child JVM
 * ({@link InlineRaceProbe}); the test asserts it exited normally. A failure names the seed; run again with
 * {@code -Djhca.inlinerace.seed=<seed>} to replay the same delays.
 */
class InlineRaceTest {

    @Test
    void inlinePostRacingDeregistrationNeverCrashes() throws Exception {
        RaceProbes.Child child = RaceProbes.run(InlineRaceProbe.class, "jhca.inlinerace.seed");
        assertEquals(0, child.result().exitValue(), child.failure("child JVM failed"));
        assertTrue(child.result().output().contains("REFUSED 100 "),
                child.failure("not every round ended with the MR refused"));
    }
}
