package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.testkit.ChildJvm;

/**
 * A builder batch racing another thread's close of its QP must never crash the JVM and must end refused: the
 * builder's per-WR closed check is a plain read, so the close may be seen only when the batch completes, after WQEs
 * went into the closed ring's memory. A crash is a SIGSEGV, so the race runs in a child JVM
 * ({@link BuilderCloseRaceProbe}); the test asserts it exited normally with every round refused. A failure names the
 * seed; run again with {@code -Djhca.closerace.seed=<seed>} to replay the same delays.
 */
class BuilderCloseRaceTest {

    /** The probe takes a few seconds and gives up by itself after 40 s; past this (within JUnit's 60 s) it is killed. */
    private static final long CHILD_TIMEOUT_SECONDS = 50;

    @Test
    void builderBatchRacingTheQpsCloseIsRefusedAndNeverCrashes() throws Exception {
        String given = System.getProperty("jhca.closerace.seed");
        long seed = given != null ? Long.parseLong(given.trim()) : System.nanoTime();
        System.out.println("BuilderCloseRaceTest seed " + seed + " (replay: -Djhca.closerace.seed=" + seed + ")");
        ChildJvm.Result child = ChildJvm.run(Duration.ofSeconds(CHILD_TIMEOUT_SECONDS),
                List.of("-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/jhca-close-race-hs_err_%p.log"),
                BuilderCloseRaceProbe.class, Long.toString(seed));
        String replay = "seed " + seed + " (replay: -Djhca.closerace.seed=" + seed + ")";
        assertEquals(0, child.exitValue(), "child JVM failed (134: SIGSEGV, 1: probe failure, 3: probe deadline), "
                + replay + ":\n" + child.output());
        System.out.print(child.output());   // where each round saw the close
        assertTrue(child.output().lines().anyMatch("REFUSED 60"::equals), "every round ends with the builder refusing, "
                + replay + ":\n" + child.output());
    }
}
