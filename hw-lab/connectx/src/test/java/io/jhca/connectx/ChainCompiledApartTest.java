package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.jhca.testkit.ChildJvm;

/**
 * postSend's chain loop is compiled apart from the loop that calls postSend, as the mlx5 provider asks HotSpot to
 * (inlined there, C2 spills in it: 1.5-1.65x rdma-core's C at 8 WRs against 1.15-1.27x apart). The JIT's own report
 * is the oracle: a child JVM ({@link ChainInliningProbe}) posts chains until its loop is compiled, under
 * {@code -XX:+PrintInlining}, and the test reads what C2 did at every call of the chain loop.
 */
class ChainCompiledApartTest {

    private static final String CHAIN = "io.jhca.mlx5.Mlx5Qp::driverPostCommonChain";

    /** The probe's output, and its answer to "was the chain loop kept apart?" at the end. */
    private record Probe(ChildJvm.Result child, String outcome) {
    }

    private static Probe probe(String... options) throws Exception {
        List<String> args = new ArrayList<>(List.of("-XX:+UnlockDiagnosticVMOptions", "-XX:+PrintInlining"));
        args.addAll(List.of(options));
        Path answer = Files.createTempFile("jhca-chain-apart-", ".txt");
        try {
            ChildJvm.Result child = ChildJvm.run(Duration.ofSeconds(80), args, ChainInliningProbe.class,
                    answer.toString());
            assertEquals(0, child.exitValue(), "the probe failed:\n" + child.head(80));
            return new Probe(child, Files.readString(answer));
        } finally {
            Files.deleteIfExists(answer);
        }
    }

    /**
     * The lines of the JIT's inlining reports about the chain loop of the mlx5 QP (JDK 17: "... (148 bytes)
     * disallowed by CompileCommand"; later JDKs: "... failed to inline: disallowed by CompileCommand ...").
     */
    private static List<String> chainLines(Probe probe) {
        return probe.child().output().lines().filter(l -> l.contains(CHAIN)).map(String::strip).toList();
    }

    @Test
    @Timeout(100)
    void theChainLoopIsNeverInlinedIntoItsCaller() throws Exception {
        Probe probe = probe();
        assertEquals("yes", probe.outcome());
        List<String> chain = chainLines(probe);
        assertFalse(chain.isEmpty(), "the caller of the chain loop was never compiled:\n" + probe.child().head(40));
        for (String line : chain) {
            assertTrue(line.contains("disallowed by CompileCommand"), "the chain loop was inlined: " + line);
        }
    }

    @Test
    @Timeout(100)
    void turnedOffTheJitDecidesAlone() throws Exception {
        Probe probe = probe("-Djhca.mlx5.compileChainApart=false");
        assertEquals("no: -Djhca.mlx5.compileChainApart=false", probe.outcome());
        for (String line : chainLines(probe)) {
            assertFalse(line.contains("disallowed"), "kept apart although turned off: " + line);
        }
    }

    /** An application's own directives are left alone: a directive matching every method would take their place. */
    @Test
    @Timeout(100)
    void anApplicationsOwnDirectivesStay() throws Exception {
        Path own = Files.createTempFile("jhca-directives-", ".json");
        try {
            Files.writeString(own, "[{ match: \"java/lang/String.hashCode\", inline: \"+java/lang/String.isLatin1\" }]");
            Probe probe = probe("-XX:CompilerDirectivesFile=" + own);
            assertEquals("no: the JVM has compiler directives of its own", probe.outcome());
            for (String line : chainLines(probe)) {
                assertFalse(line.contains("disallowed"), "kept apart over the application's directives: " + line);
            }
        } finally {
            Files.deleteIfExists(own);
        }
    }
}
