package io.jhca.rxe;

import io.jhca.rxe.transport.CqRing;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.WorkCompletion;

/** A completion queue of an rxe device: a {@link CqRing} the engine fills and the application polls. */
final class RxeCq extends CompletionQueue {

    private final CqRing ring;

    RxeCq(final RxeContext context, final int cqn, final int cqe) {
        this(context, cqn, new CqRing(cqe));
    }

    private RxeCq(final RxeContext context, final int cqn, final CqRing ring) {
        super(context, cqn, ring.capacity());
        this.ring = ring;
        ring.onOverrun(this::overrun); // posts CQ_ERR at once; polls throw from then on
        ring.onEvent(this::raiseCompletionEvent); // runs on the engine's thread only when the ring was armed
    }

    CqRing ring() {
        return ring;
    }

    @Override
    protected int driverPoll(final WorkCompletion wc) {
        final int n = ring.poll(wc);
        if (n < 0) {
            throw overrun();
        }
        return n;
    }

    @Override
    protected void driverRequestNotify(final boolean solicitedOnly) {
        ring.arm(solicitedOnly);
    }

    @Override
    protected void destroy() {
        // the ring is plain Java memory; QPs using this CQ refuse to outlive it
    }
}
