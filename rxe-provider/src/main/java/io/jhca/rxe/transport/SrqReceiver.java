package io.jhca.rxe.transport;

/**
 * A QP's receive side when it is attached to an SRQ: a message that needs a WQE takes the SRQ's oldest and keeps a
 * copy of it until the message completes (rxe resp.srq_wqe), so a message in progress on one QP never loses its
 * buffer to another QP, and an error of this QP flushes only the WQE it took.
 */
public final class SrqReceiver extends RecvSource {

    private final TransportSrq srq;
    private final RecvWqe held;
    private boolean holding;

    SrqReceiver(final TransportSrq srq, final int maxSge) {
        this.srq = srq;
        this.held = new RecvWqe(maxSge);
    }

    @Override
    RecvWqe peek() {
        if (holding) {
            return held;
        }
        if (srq.take(held)) {
            holding = true;
            return held;
        }
        return null;
    }

    @Override
    boolean hasPosted() {
        return holding || srq.ring.hasPosted();
    }

    @Override
    void completeHead() {
        holding = false;
    }

    @Override
    void discardAll() {
        holding = false;
    }

    @Override
    RecvWqe peekFlush() {
        return holding ? held : null;
    }
}
