package io.jhca.lab;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;

/** The few C printf conversions the rdma-core and perftest outputs use that Java's Formatter spells differently. */
public final class CFormat {
    private CFormat() {
    }

    /**
     * C's {@code %#0<width>x}: "0x" then hex digits, zero-padded so that prefix and digits fill {@code width};
     * as in C, the value 0 gets no "0x" prefix and is all zeros ({@code %#04x} of 0 is "0000").
     */
    public static String altHex(long value, int width) {
        String digits = Long.toHexString(value);
        if (value == 0) {
            return pad("0", width);
        }
        return "0x" + pad(digits, width - 2);
    }

    /** Left-pads with zeros to {@code width} (never truncates). */
    public static String pad(String digits, int width) {
        if (digits.length() >= width) {
            return digits;
        }
        StringBuilder sb = new StringBuilder(width);
        for (int i = digits.length(); i < width; i++) {
            sb.append('0');
        }
        return sb.append(digits).toString();
    }

    /**
     * C's {@code %.<decimals>f}: the exact binary value of {@code v} rounded half-to-even, as glibc prints it.
     * Java's {@code %.2f} rounds the shortest decimal representation half-up instead, so 0.125 would become
     * "0.13" (C: "0.12") and 1.005 "1.01" (C: "1.00"): output meant to match perftest byte for byte uses this.
     */
    public static String fixed(double v, int decimals) {
        if (Double.isNaN(v)) {
            return "nan";
        }
        if (Double.isInfinite(v)) {
            return v > 0 ? "inf" : "-inf";
        }
        String t = new BigDecimal(v).setScale(decimals, RoundingMode.HALF_EVEN).toPlainString();
        if (v < 0 || (v == 0 && 1 / v < 0)) {
            // BigDecimal drops the sign of a value that rounds to zero; C keeps it ("-0.00")
            return t.startsWith("-") ? t : "-" + t;
        }
        return t;
    }

    /** String.format in the C locale, so decimals always use a dot. */
    public static String f(String format, Object... args) {
        return String.format(Locale.ROOT, format, args);
    }
}
