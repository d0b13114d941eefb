package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.testkit.ChildJvm;

/**
 * An INLINE post racing the deregistration of its MR and the close of the MR's region must never crash the JVM:
 * the QP holds the MR while it copies. A crash is a SIGSEGV, so the race runs in a child JVM
 * ({@link InlineRaceProbe}); the test asserts it exited normally. A failure names the seed; run again with
 * {@code -Djhca.inlinerace.seed=<seed>} to replay the same delays.
 */
class InlineRaceTest {

    /** The probe takes about a second and gives up by itself after 40 s; past this (within JUnit's 60 s) it is killed. */
    private static final long CHILD_TIMEOUT_SECONDS = 50;

    @Test
    void inlinePostRacingDeregistrationNeverCrashes() throws Exception {
        String given = System.getProperty("jhca.inlinerace.seed");
        long seed = given != null ? Long.parseLong(given.trim()) : System.nanoTime();
        System.out.println("InlineRaceTest seed " + seed + " (replay: -Djhca.inlinerace.seed=" + seed + ")");
        ChildJvm.Result child = ChildJvm.run(Duration.ofSeconds(CHILD_TIMEOUT_SECONDS),
                List.of("-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/jhca-inline-race-hs_err_%p.log"),
                InlineRaceProbe.class, Long.toString(seed));
        String replay = "seed " + seed + " (replay: -Djhca.inlinerace.seed=" + seed + ")";
        assertEquals(0, child.exitValue(), "child JVM failed (134: SIGSEGV, 1: probe failure, 3: probe deadline), "
                + replay + ":\n" + child.output());
        assertTrue(child.output().contains("REFUSED 100 "), "every round ends with the MR refused, " + replay + ":\n"
                + child.output());
    }
}
