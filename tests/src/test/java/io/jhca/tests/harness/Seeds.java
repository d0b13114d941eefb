package io.jhca.tests.harness;

import java.security.SecureRandom;

/** Random seeds that are printed and can be given back: a property's value if set, else a fresh random one. */
public final class Seeds {
    private Seeds() {
    }

    /** The value of {@code property} (decimal or 0x hex), else a new random seed; printed either way. */
    public static long of(String property, String what) {
        String v = System.getProperty(property);
        long seed = v != null && !v.isBlank() ? Long.decode(v.trim()) : new SecureRandom().nextLong();
        System.out.println(what + ": seed " + seed + (v != null ? " (from -D" + property + ")" : "")
                + "; replay with -D" + property + "=" + seed);
        return seed;
    }

    /** {@code e} with the seed and how to replay it in front of its message. */
    public static AssertionError replay(AssertionError e, String property, long seed, String what) {
        AssertionError out = new AssertionError(what + " failed with seed " + seed + " (replay with -D" + property + "="
                + seed + "): " + e.getMessage(), e);
        return out;
    }
}
