package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The line a run without warm-up adds when the JIT compiled inside its measured window: from exactly
 * {@value PerfRun#COLD_JIT_MILLIS} ms on, never with a warm-up or without a JIT to ask.
 */
@Timeout(10)
class ColdJitHintTest {

    @Test
    void saysSoFromTheThresholdOn() {
        assertNull(PerfRun.coldJitHint(0, PerfRun.COLD_JIT_MILLIS - 1, true));
        final String latency = PerfRun.coldJitHint(0, PerfRun.COLD_JIT_MILLIS, true);
        assertTrue(latency != null && latency.contains("compiled for " + PerfRun.COLD_JIT_MILLIS + " ms")
                && latency.contains("--warmup " + PerfTestCommand.IN_PROCESS_WARMUP), latency);
        final String bandwidth = PerfRun.coldJitHint(0, 283, false);
        assertTrue(bandwidth != null && bandwidth.contains("compiled for 283 ms")
                && bandwidth.contains("--warmup " + PerfTestCommand.IN_PROCESS_BW_WARMUP), bandwidth);
    }

    @Test
    void notWithAWarmUpNorWithoutAJit() {
        assertNull(PerfRun.coldJitHint(1, 500, true));
        assertNull(PerfRun.coldJitHint(20000, 500, false));
        assertNull(PerfRun.coldJitHint(0, -1, true));   // no compilation MXBean: the footer says nothing either
    }
}
