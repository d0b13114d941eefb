package io.jhca.rxe.wire;

/**
 * RNR NAK timer codes (IBTA table 45; rxe_comp.c rnrnak_usec; rocev2.md §1.5): the 5-bit value of an RNR
 * NAK syndrome and of a QP's min_rnr_timer, mapped to the wait before retrying. Code 25 is 61.44 ms as the
 * IBTA says (rxe's table has the typo 61410 µs); code 0 is the longest wait, 655.36 ms.
 */
public final class RnrTimer {

    public static final int CODES = 32;

    private static final long[] NANOS = {
        655_360_000L, // 0
        10_000L, 20_000L, 30_000L, 40_000L, 60_000L, 80_000L, 120_000L, // 1..7
        160_000L, 240_000L, 320_000L, 480_000L, 640_000L, 960_000L, 1_280_000L, 1_920_000L, // 8..15
        2_560_000L, 3_840_000L, 5_120_000L, 7_680_000L, 10_240_000L, 15_360_000L, 20_480_000L, 30_720_000L, // 16..23
        40_960_000L, 61_440_000L, 81_920_000L, 122_880_000L, 163_840_000L, 245_760_000L, 327_680_000L, // 24..30
        491_520_000L, // 31
    };

    private RnrTimer() {
    }

    /** Wait in nanoseconds for timer code 0..31. */
    public static long nanos(final int code) {
        if ((code & ~(CODES - 1)) != 0) {
            throw new IllegalArgumentException("RNR timer code must be 0..31: " + code);
        }
        return NANOS[code];
    }

    /** Code of the shortest wait that is at least {@code nanos}; 0 (655.36 ms, the longest) when none shorter is. */
    public static int codeForAtLeast(final long nanos) {
        for (int code = 1; code < CODES; code++) { // codes 1..31 grow monotonically
            if (NANOS[code] >= nanos) {
                return code;
            }
        }
        return 0;
    }
}
