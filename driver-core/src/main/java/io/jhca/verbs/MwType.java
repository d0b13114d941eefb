package io.jhca.verbs;

/** Memory window types, with the values of {@code enum ibv_mw_type} (libibverbs verbs.h). */
public enum MwType {
    /** Bound with {@link QueuePair#bindMw} ({@code ibv_bind_mw}); invalidated only by a zero-length bind. */
    TYPE_1(1),
    /**
     * Bound by a {@link WrOpcode#BIND_MW} work request to the QP that posted it; invalidated by
     * {@link WrOpcode#LOCAL_INV} or by a peer's {@link WrOpcode#SEND_WITH_INV}.
     */
    TYPE_2(2);

    private final int value;

    MwType(int value) {
        this.value = value;
    }

    /** The libibverbs value. */
    public int value() {
        return value;
    }
}
