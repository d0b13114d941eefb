package io.jhca.rxe.wire;

/**
 * 24-bit packet sequence number arithmetic (rocev2.md §3.1). All results are masked to 24 bits
 * (rxe BTH_PSN_MASK); comparison is modular within half the space, as rxe's {@code psn_compare}:
 * the sign of {@code (s32)((a - b) << 8)}.
 */
public final class Psn {

    public static final int MASK = 0xFFFFFF;
    /** Half the PSN space: the largest distance {@link #compare} orders correctly. */
    public static final int HALF = 1 << 23;

    private Psn() {
    }

    public static boolean isValid(final int psn) {
        return (psn & ~MASK) == 0;
    }

    public static int add(final int psn, final int n) {
        return (psn + n) & MASK;
    }

    public static int next(final int psn) {
        return (psn + 1) & MASK;
    }

    public static int previous(final int psn) {
        return (psn - 1) & MASK;
    }

    /** Negative if {@code a} is before {@code b}, 0 if equal, positive if after (within 2^23). */
    public static int compare(final int a, final int b) {
        return (a - b) << 8;
    }

    /** Signed distance {@code a - b} in [-2^23, 2^23). */
    public static int diff(final int a, final int b) {
        return ((a - b) << 8) >> 8;
    }
}
