package io.jhca.cm.ib;

/** The CM's exponential time codes (IBTA 12.6.5 CM response timeouts, 9.7.6.1.3 local ACK timeout). */
public final class CmTimeouts {
    private CmTimeouts() {
    }

    /** 4.096 us * 2^code, in nanoseconds (code 0..31). */
    public static long nanos(int code) {
        if (code < 0 || code > 31) {
            throw new IllegalArgumentException("CM time code " + code + " is outside 0..31");
        }
        return 4096L << code;
    }

    /** The smallest code whose time is at least {@code nanos}. */
    public static int code(long nanos) {
        int c = 0;
        while (c < 31 && nanos(c) < nanos) {
            c++;
        }
        return c;
    }
}
