package io.jhca.verbs;

/** Work completion flags, with the bits of {@code enum ibv_wc_flags}. */
public final class WcFlags {
    /** A GRH (for RoCEv2: the IP header area) is in the first 40 bytes of the receive buffer. */
    public static final int GRH = 1;
    public static final int WITH_IMM = 1 << 1;
    public static final int IP_CSUM_OK = 1 << 2;
    public static final int WITH_INV = 1 << 3;

    private WcFlags() {
    }
}
