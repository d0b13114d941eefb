package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.jhca.testkit.ChildJvm;

/**
 * An MR deregistered (and its region closed) while its bytes are copied, inline at post time or by the engine,
 * gives an exception or an error completion, never a JVM crash. A crash is a SIGSEGV, so the race runs in a child
 * JVM ({@link MrRaceProbe}); the test asserts it exited normally and every round ended one of those two ways.
 */
class MrRaceTest {

    @ParameterizedTest
    @ValueSource(strings = {"inline", "engine"})
    void deregistrationRacingACopyNeverCrashes(final String where) throws Exception {
        final String given = System.getProperty("jhca.mrrace.seed");
        final long seed = given != null ? Long.parseLong(given.trim()) : System.nanoTime();
        final String replay = where + ", seed " + seed + " (replay: -Djhca.mrrace.seed=" + seed + ")";
        System.out.println("MrRaceTest " + replay);
        final ChildJvm.Result child = ChildJvm.run(Duration.ofSeconds(50),
                List.of("-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/jhca-mr-race-hs_err_%p.log"),
                MrRaceProbe.class, where, Long.toString(seed));
        assertEquals(0, child.exitValue(), "child JVM died (134: SIGSEGV), " + replay + ": " + child.head(12));
        assertTrue(child.output().contains("ENDED " + MrRaceProbe.ROUNDS + " "), replay + ": " + child.output());
    }
}
