package io.jhca.verbs;

/** Options of {@link Context#createCq(int, int)}, as bits ({@code enum ibv_create_cq_attr_flags}). */
public final class CqFlags {

    /**
     * The CQ will be polled by one thread only ({@code IBV_CREATE_CQ_ATTR_SINGLE_THREADED}): polling takes no
     * lock; the CQ belongs to the first thread that polls it, and any other thread is refused with an
     * {@link IllegalStateException}. Without this flag polls lock, so threads may share the CQ.
     */
    public static final int SINGLE_THREADED = 1;

    static final int ALL = SINGLE_THREADED;

    private CqFlags() {
    }
}
