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
        assertNull(PerfRun.coldJitHint(0, PerfRun.COLD_JIT_MILLIS - 1, false));
        final String perftest = PerfRun.coldJitHint(0, PerfRun.COLD_JIT_MILLIS, false);
        assertTrue(perftest != null && perftest.contains("compiled for " + PerfRun.COLD_JIT_MILLIS + " ms")
                && perftest.contains("the peer is not hwlab") && perftest.contains("-n 100000")
                && !perftest.contains("leave --warmup out"), perftest);
        final String zero = PerfRun.coldJitHint(0, 283, true);
        assertTrue(zero != null && zero.contains("compiled for 283 ms") && zero.contains("(--warmup 0)")
                && zero.contains("leave --warmup out"), zero);
    }

    @Test
    void notWithAWarmUpNorWithoutAJit() {
        assertNull(PerfRun.coldJitHint(1, 500, true));
        assertNull(PerfRun.coldJitHint(20000, 500, false));
        assertNull(PerfRun.coldJitHint(0, -1, true));   // no compilation MXBean: the footer says nothing either
    }
}
