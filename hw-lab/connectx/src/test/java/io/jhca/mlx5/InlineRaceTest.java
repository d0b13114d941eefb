package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

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
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // the child's output goes to a file, not a pipe: reading a pipe blocks until the child exits, so a hung
        // child would hang the test before any timeout could run
        Path log = Files.createTempFile("jhca-inline-race-", ".log");
        Process p = null;
        try {
            p = new ProcessBuilder(List.of(java, "--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
                    "-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/jhca-inline-race-hs_err_%p.log",
                    "-cp", System.getProperty("java.class.path"), InlineRaceProbe.class.getName(), Long.toString(seed)))
                    .redirectErrorStream(true).redirectOutput(log.toFile()).start();
            boolean exited = p.waitFor(CHILD_TIMEOUT_SECONDS, TimeUnit.SECONDS);
            if (!exited) {
                p.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            String out = new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
            String replay = "seed " + seed + " (replay: -Djhca.inlinerace.seed=" + seed + ")";
            assertTrue(exited, "probe hung for " + CHILD_TIMEOUT_SECONDS + " s and was killed, " + replay + ":\n" + out);
            assertEquals(0, p.exitValue(), "child JVM failed (134: SIGSEGV, 1: probe failure, 3: probe deadline), "
                    + replay + ":\n" + out);
            assertTrue(out.contains("REFUSED 100 "), "every round ends with the MR refused, " + replay + ":\n" + out);
        } finally {
            if (p != null && p.isAlive()) {
                p.destroyForcibly();   // the test thread was interrupted or failed early: never leave the child running
            }
            Files.deleteIfExists(log);
        }
    }
}
