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
}
