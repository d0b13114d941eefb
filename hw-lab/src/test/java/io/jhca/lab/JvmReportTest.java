package io.jhca.lab;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The footer's "allocated by the measuring thread": what the thread allocated inside the window, nothing of the
 * report's own reading, and a window restarted by {@link JvmReport#begin()} (at the end of a warm-up) forgets what
 * came before it.
 */
class JvmReportTest {

    private static volatile Object sink;

    @Test
    void countsTheWindowOnlyAndNothingOfItsOwn() {
        JvmReport empty = JvmReport.start().stop();
        assertEquals(0, empty.allocatedBytes(), "an empty window: the report's own reads are not counted");

        JvmReport r = JvmReport.start();
        sink = new byte[1 << 20];                  // the warm-up's
        r.begin();                                 // the measured iterations start here
        sink = new byte[100_000];
        r.stop();
        assertTrue(r.allocatedBytes() >= 100_000 && r.allocatedBytes() < 200_000,
                "only the window's 100 kB: " + r.allocatedBytes());

        r.begin();                                 // a second window adds up
        sink = new byte[50_000];
        r.stop();
        assertTrue(r.allocatedBytes() >= 150_000 && r.allocatedBytes() < 250_000, "both windows: " + r.allocatedBytes());
    }

    /**
     * The wait after a warm-up lasts until the compiler has been idle for JIT_IDLE_MILLIS, and never longer than
     * JIT_WAIT_MAX_MILLIS (plus one poll); the footer and the report say how long it waited and how much the JIT
     * compiled inside the window.
     */
    @Test
    void waitsForTheCompilerToGoIdleAndSaysSo() {
        JvmReport r = JvmReport.start();
        assertEquals(-1, r.jitWaitMillis(), "no wait before awaitJitIdle");
        assertTrue(r.footer().contains("JIT compiling during measurement"), r.footer());
        assertTrue(!r.footer().contains("waiting for it to go idle"), r.footer());
        long waited = r.awaitJitIdle();
        assertEquals(waited, r.jitWaitMillis());
        assertTrue(waited >= JvmReport.JIT_IDLE_MILLIS, "idle for at least " + JvmReport.JIT_IDLE_MILLIS + " ms: " + waited);
        assertTrue(waited <= JvmReport.JIT_WAIT_MAX_MILLIS + 4 * JvmReport.JIT_POLL_MILLIS, "bounded: " + waited);
        r.begin();
        r.stop();
        assertTrue(r.jitMillis() >= 0, "HotSpot reports its compile time: " + r.jitMillis());
        assertTrue(r.footer().endsWith("(after " + waited + " ms waiting for it to go idle after the warm-up)"), r.footer());
    }
}
