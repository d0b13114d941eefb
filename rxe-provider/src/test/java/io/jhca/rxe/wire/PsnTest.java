package io.jhca.rxe.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.junit.jupiter.api.Test;

class PsnTest {

    @Test
    void wrapsAt24Bits() {
        assertEquals(0, Psn.next(0xFFFFFF));
        assertEquals(0xFFFFFF, Psn.previous(0));
        assertEquals(5, Psn.add(0xFFFFFE, 7));
        assertEquals(0xFFFFFF, Psn.add(0, -1));
        assertTrue(Psn.isValid(0xFFFFFF));
        assertFalse(Psn.isValid(0x1000000));
        assertFalse(Psn.isValid(-1));
    }

    @Test
    void compareIsModularWithinHalfTheSpace() {
        assertTrue(Psn.compare(0, 0xFFFFFF) > 0, "0 comes after 0xFFFFFF");
        assertTrue(Psn.compare(0xFFFFFF, 0) < 0);
        assertEquals(0, Psn.compare(0x123456, 0x123456));
        assertTrue(Psn.compare(0x7FFFFF, 0) > 0);
        assertTrue(Psn.compare(0x800000, 0) < 0, "exactly half way reads as before (sign bit)");
        assertEquals(-0x800000, Psn.diff(0x800000, 0));
        assertEquals(0x7FFFFF, Psn.diff(0x7FFFFF, 0));
        assertEquals(1, Psn.diff(0, 0xFFFFFF));
    }

    @Test
    void diffInvertsAddForEveryDistanceBelowHalf() {
        final Random rnd = new Random(9);
        for (int i = 0; i < 100_000; i++) {
            final int a = rnd.nextInt(1 << 24);
            final int d = rnd.nextInt(1 << 24) - (1 << 23); // [-2^23, 2^23)
            final int b = Psn.add(a, d);
            assertEquals(d, Psn.diff(b, a));
            assertEquals(Integer.signum(d), Integer.signum(Psn.compare(b, a)), a + " + " + d);
        }
    }

    @Test
    void rnrTimerCodes() {
        assertEquals(655_360_000L, RnrTimer.nanos(0));
        assertEquals(10_000L, RnrTimer.nanos(1));
        assertEquals(640_000L, RnrTimer.nanos(12), "min_rnr_timer 12 of rc_pingpong/perftest: 0.64 ms");
        assertEquals(61_440_000L, RnrTimer.nanos(25), "61.44 ms, not rxe's 61.41 typo");
        assertEquals(491_520_000L, RnrTimer.nanos(31));
        for (int code = 2; code < RnrTimer.CODES; code++) {
            assertTrue(RnrTimer.nanos(code) > RnrTimer.nanos(code - 1));
        }
        assertThrows(IllegalArgumentException.class, () -> RnrTimer.nanos(32));
        assertThrows(IllegalArgumentException.class, () -> RnrTimer.nanos(-1));
        assertEquals(1, RnrTimer.codeForAtLeast(0));
        assertEquals(2, RnrTimer.codeForAtLeast(10_001));
        assertEquals(12, RnrTimer.codeForAtLeast(640_000));
        assertEquals(0, RnrTimer.codeForAtLeast(491_520_001));
    }
}
