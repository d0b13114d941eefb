package io.jhca.rxe.transport;

/**
 * Where a QP's responder takes receive WQEs from: its own {@link RecvRing}, or a shared receive queue through an
 * {@link SrqReceiver}. Engine thread only.
 */
public abstract class RecvSource {

    /** The WQE the next (or the in-progress) message fills, or null if none is posted. */
    abstract RecvWqe peek();

    /** True if {@link #peek()} would find a WQE. */
    abstract boolean hasPosted();

    /** The WQE from {@link #peek()} completed. */
    abstract void completeHead();

    /** RESET: everything this QP holds is dropped without completions. */
    abstract void discardAll();

    /**
     * The next WQE to flush with WR_FLUSH_ERR in the error state, or null: a QP's own ring flushes everything, a
     * QP of an SRQ only the WQE it took (the SRQ's WQEs belong to its other QPs).
     */
    abstract RecvWqe peekFlush();
}
