package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

/**
 * An INLINE post racing the deregistration of its MR and the close of the MR's region must never crash the JVM:
 * the QP holds the MR while it copies. A crash is a SIGSEGV, so the race runs in a child JVM
 * ({@link InlineRaceProbe}); the test asserts it exited normally.
 */
class InlineRaceTest {

    @Test
    void inlinePostRacingDeregistrationNeverCrashes() throws Exception {
        long seed = System.nanoTime();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        Process p = new ProcessBuilder(List.of(java, "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
                "-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/jhca-inline-race-hs_err_%p.log",
                "-cp", System.getProperty("java.class.path"), InlineRaceProbe.class.getName(), Long.toString(seed)))
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(50, TimeUnit.SECONDS), "probe hung, seed " + seed + ": " + out);
        assertEquals(0, p.exitValue(), "child JVM died (134: SIGSEGV), seed " + seed + ": "
                + String.join("\n", out.lines().limit(12).toList()));
        assertTrue(out.contains("REFUSED 100 "), "every round ends with the MR refused, seed " + seed + ": " + out);
    }
}
