package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * A builder batch racing another thread's close of its QP must never crash the JVM and must end refused with an error
 * that says "closed": the builder's per-WR closed check is a plain read, so the close may be seen late (at the next
 * start() or complete() at the latest), after WQEs went into the closed ring's memory. A crash is a SIGSEGV, so the
 * race runs in a child JVM ({@link BuilderCloseRaceProbe}); the test asserts it exited normally with every round
 * refused. A failure names the seed; run again with {@code -Djhca.closerace.seed=<seed>} to replay the same delays.
 */
class BuilderCloseRaceTest {

    @Test
    void builderBatchRacingTheQpsCloseIsRefusedAndNeverCrashes() throws Exception {
        RaceProbes.Child child = RaceProbes.run(BuilderCloseRaceProbe.class, "jhca.closerace.seed");
        System.out.print(child.result().output());   // where each round saw the close
        assertEquals(0, child.result().exitValue(), child.failure("child JVM failed"));
        assertTrue(child.result().output().lines().anyMatch("REFUSED 60"::equals),
                child.failure("not every round ended with the builder refusing"));
    }
}
