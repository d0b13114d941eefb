package io.jhca.verbs;

/** Path MTU, with the values of {@code enum ibv_mtu} (also what perftest exchanges as text). */
public enum Mtu {
    MTU_256(1, 256), MTU_512(2, 512), MTU_1024(3, 1024), MTU_2048(4, 2048), MTU_4096(5, 4096);

    private final int value;
    private final int bytes;

    Mtu(int value, int bytes) {
        this.value = value;
        this.bytes = bytes;
    }

    public int value() {
        return value;
    }

    public int bytes() {
        return bytes;
    }

    public static Mtu of(int value) {
        for (Mtu m : values()) {
            if (m.value == value) {
                return m;
            }
        }
        throw new VerbsException(VerbsException.EINVAL, "invalid MTU enum value " + value + " (1..5)");
    }

    /** The MTU for a size in bytes (256, 512, ..., 4096), as rc_pingpong's -m option takes it. */
    public static Mtu ofBytes(int bytes) {
        for (Mtu m : values()) {
            if (m.bytes == bytes) {
                return m;
            }
        }
        throw new VerbsException(VerbsException.EINVAL, "invalid MTU " + bytes + " (256, 512, 1024, 2048 or 4096)");
    }

    /** The largest IB MTU not above {@code bytes} (e.g. a netdev MTU minus RoCE headers). */
    public static Mtu largestNotAbove(int bytes) {
        Mtu best = MTU_256;
        for (Mtu m : values()) {
            if (m.bytes <= bytes) {
                best = m;
            }
        }
        return best;
    }
}
