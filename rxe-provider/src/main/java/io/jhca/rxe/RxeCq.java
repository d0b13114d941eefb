package io.jhca.rxe;

import io.jhca.rxe.transport.CqRing;
import io.jhca.rxe.transport.Engine;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.WorkCompletion;

/**
 * A completion queue of an rxe device: a {@link CqRing} the engine fills and the application polls. With thread
 * progress an empty poll of a CQ not armed for an event runs a duty cycle when no other runs, as a progress call does,
 * and looks again ({@link RxeDeviceConfig#POLL_PROGRESS_PROPERTY}): an application's polling loop then moves the
 * device itself, as libfabric's providers and UCX progress from their completion reads. A poll that returns a
 * completion, and an arm, end such a loop: what the application waits for next may come by the engine thread.
 */
final class RxeCq extends CompletionQueue {

    private final CqRing ring;
    private final Engine engine;
    private final boolean pollProgress;

    RxeCq(final RxeContext context, final int cqn, final int cqe) {
        this(context, cqn, new CqRing(cqe));
    }

    private RxeCq(final RxeContext context, final int cqn, final CqRing ring) {
        super(context, cqn, ring.capacity());
        this.ring = ring;
        this.engine = context.engine();
        // caller progress ignores the setting: there an empty poll reads the ring only, with no call into the engine
        this.pollProgress = context.config().pollProgress() && context.config().progressMode() == ProgressMode.THREAD;
        ring.onOverrun(this::overrun); // posts CQ_ERR at once; polls throw from then on
        ring.onEvent(this::raiseCompletionEvent); // runs on the engine's thread only when the ring was armed
    }

    CqRing ring() {
        return ring;
    }

    @Override
    protected int driverPoll(final WorkCompletion wc) {
        int n = ring.poll(wc);
        // not on an armed CQ: its application is about to sleep for the event, which the engine thread raises
        if (n == 0 && pollProgress && ring.armed() == CqRing.DISARMED && engine.progressFromPoll() > 0) {
            n = ring.poll(wc);
        }
        if (n < 0) {
            throw overrun();
        }
        if (n > 0) {
            engine.loopEnded();   // the wait is over: an engine thread parked for it takes over again
        }
        return n;
    }

    @Override
    protected void driverRequestNotify(final boolean solicitedOnly) {
        ring.arm(solicitedOnly);
        engine.loopEnded();   // the application will sleep for the event: an engine thread parked for its loop raises it
    }

    @Override
    protected void destroy() {
        // the ring is plain Java memory; QPs using this CQ refuse to outlive it
    }
}
