package io.jhca.rxe;

import io.jhca.rxe.transport.RecvRing;
import io.jhca.rxe.transport.TransportSrq;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqInitAttributes;

/**
 * A shared receive queue of an rxe device: posting writes WQEs into preallocated ring slots and publishes them with
 * one release store, as a QP's receive queue; the engine's responders of the attached QPs take them in order.
 * Resizing is refused (the device does not advertise IBV_DEVICE_SRQ_RESIZE).
 */
final class RxeSrq extends SharedReceiveQueue implements TransportSrq.Events {

    private final RxeContext context;
    private final RecvRing ring;
    private final TransportSrq transport;

    RxeSrq(final RxePd pd, final SrqInitAttributes init) {
        super(pd, init.maxWr(), init.maxSge());
        this.context = pd.rxe();
        srqn(context.allocateSrqn());
        this.ring = new RecvRing(init.maxWr(), init.maxSge());
        maxWr(ring.capacity());
        this.transport = new TransportSrq(ring, init.maxSge(), this);
    }

    TransportSrq transport() {
        return transport;
    }

    @Override
    protected boolean driverPostRecv(final RecvWr wr) {
        return RecvPosting.post(ring, wr);
    }

    @Override
    protected void driverRingDoorbell() {
        ring.publish();
        context.engine().notifyPosted();
    }

    @Override
    protected void driverArmLimit(final int limit) {
        context.engine().runOnEngine(() -> transport.arm(limit));
    }

    @Override
    protected int driverQueryLimit() {
        return transport.limit();
    }

    @Override
    public void limitReached(final int limit, final long remaining) {
        context.post(AsyncEvent.of(AsyncEvent.Type.SRQ_LIMIT_REACHED, this, remaining
                + " WQEs left, below the limit " + limit));
    }

    @Override
    protected void destroy() {
        // nothing of its own: the QPs that take from it (which refuse to outlive it) are gone
    }
}
