package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * An MR deregistered (and its region closed) while its bytes are copied, inline at post time or by the engine,
 * gives an exception or an error completion, never a JVM crash. A crash is a SIGSEGV, so the race runs in a child
 * JVM ({@link MrRaceProbe}); the test asserts it exited normally and every round ended one of those two ways.
 */
class MrRaceTest {

    @ParameterizedTest
    @ValueSource(strings = {"inline", "engine"})
    void deregistrationRacingACopyNeverCrashes(final String where) throws Exception {
        final long seed = System.nanoTime();
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final Process p = new ProcessBuilder(List.of(java, "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
                "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED",
                "-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/jhca-mr-race-hs_err_%p.log",
                "-cp", System.getProperty("java.class.path"), MrRaceProbe.class.getName(), where, Long.toString(seed)))
                .redirectErrorStream(true).start();
        final String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(50, TimeUnit.SECONDS), "probe hung, seed " + seed + ": " + out);
        assertEquals(0, p.exitValue(), "child JVM died (134: SIGSEGV), " + where + ", seed " + seed + ": "
                + String.join("\n", out.lines().limit(12).toList()));
        assertTrue(out.contains("ENDED " + MrRaceProbe.ROUNDS + " "), where + ", seed " + seed + ": " + out);
    }
}
