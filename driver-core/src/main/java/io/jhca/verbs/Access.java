package io.jhca.verbs;

/** Memory and QP access flags, with the bit values of {@code enum ibv_access_flags}. */
public enum Access {
    LOCAL_WRITE(1),
    REMOTE_WRITE(1 << 1),
    REMOTE_READ(1 << 2),
    REMOTE_ATOMIC(1 << 3),
    MW_BIND(1 << 4);

    private final int bit;

    Access(int bit) {
        this.bit = bit;
    }

    public int bit() {
        return bit;
    }

    /** The OR of the given flags. */
    public static int mask(Access... flags) {
        int m = 0;
        for (Access a : flags) {
            m |= a.bit;
        }
        return m;
    }

    public static boolean has(int mask, Access flag) {
        return (mask & flag.bit) != 0;
    }

    /** All bits any flag defines; anything else in a mask is refused. */
    public static final int ALL = 0x1f;

    /** "LOCAL_WRITE|REMOTE_READ", for messages and tools. */
    public static String describe(int mask) {
        StringBuilder sb = new StringBuilder();
        for (Access a : values()) {
            if ((mask & a.bit) != 0) {
                sb.append(sb.length() == 0 ? "" : "|").append(a.name());
            }
        }
        return sb.length() == 0 ? "0" : sb.toString();
    }
}
