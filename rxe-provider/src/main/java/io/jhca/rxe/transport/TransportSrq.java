package io.jhca.rxe.transport;

/**
 * The engine's side of a shared receive queue: the ring the application posts into and the armed limit. The QPs
 * attached to it take WQEs through their {@link SrqReceiver}s, all on the device's engine thread.
 */
public final class TransportSrq {

    /** How the SRQ tells the verbs object that its limit was crossed. */
    public interface Events {
        /** The number of posted WQEs dropped below the armed limit; the limit is disarmed. */
        void limitReached(int limit, long remaining);
    }

    final RecvRing ring;
    private final int maxSge;
    private final Events events;
    /** The armed limit, 0 when not armed; written by the engine (disarm) and through {@link #arm}. */
    private volatile int limit;

    public TransportSrq(final RecvRing ring, final int maxSge, final Events events) {
        this.ring = ring;
        this.maxSge = maxSge;
        this.events = events;
    }

    /** Arms (or with 0 disarms) the limit; run it on the engine (Engine.runOnEngine) so it cannot race a take. */
    public void arm(final int limit) {
        this.limit = limit;
    }

    public int limit() {
        return limit;
    }

    /** A per-QP view that takes WQEs from this SRQ. */
    public SrqReceiver receiver() {
        return new SrqReceiver(this, maxSge);
    }

    /**
     * Engine: copies the oldest posted WQE into {@code into} and frees its slot (rxe get_srq_wqe), then reports the
     * limit if the count left dropped below it (IBTA 11.2.4.4: once, the limit disarms). False if the SRQ is empty.
     */
    boolean take(final RecvWqe into) {
        final RecvWqe w = ring.peek();
        if (w == null) {
            return false;
        }
        into.open(w.wrId);
        for (int i = 0; i < w.numSge; i++) {
            into.addSge(w.sgeAddr[i], w.sgeLength[i], w.sgeLkey[i]);
        }
        ring.completeHead();
        final int l = limit;
        if (l != 0) {
            final long left = ring.count();
            if (left < l) {
                limit = 0;
                events.limitReached(l, left);
            }
        }
        return true;
    }
}
