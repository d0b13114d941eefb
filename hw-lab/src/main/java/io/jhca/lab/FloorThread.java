package io.jhca.lab;

import java.util.concurrent.atomic.AtomicReference;

/**
 * The thread one end of a UDP floor runs in while the caller's thread runs the other end (in-process floors) or waits
 * on the TCP connection ({@link RemoteFloors}): a daemon, whose failure, if it is the first, is kept for the caller.
 */
final class FloorThread {
    /** How long the caller waits for an end it has just told to stop (closed its socket, set its failure). */
    static final long JOIN_MILLIS = 5000;

    /** An end's loop. */
    interface Body {
        void run() throws Exception;
    }

    private FloorThread() {
    }

    /** Starts {@code body} in a daemon thread named {@code name}; what it throws goes to {@code failure} if unset. */
    static Thread start(String name, AtomicReference<Throwable> failure, Body body) {
        Thread t = new Thread(() -> {
            try {
                body.run();
            } catch (Throwable e) {
                failure.compareAndSet(null, e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** Waits up to {@value #JOIN_MILLIS} ms for {@code t} to end (keeping an interrupt for the caller). */
    static void join(Thread t) {
        try {
            t.join(JOIN_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
