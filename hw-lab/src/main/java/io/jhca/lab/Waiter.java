package io.jhca.lab;

import io.jhca.verbs.CompletionChannel;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.WorkCompletion;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Busy-waits for completions or for a byte in memory, driving the device's progress from the waiting thread
 * (needed when a software device runs without its own thread; a no-op for hardware). Allocates nothing while
 * waiting. A wait that sees no progress for the stall timeout throws, so a lost peer ends a run with a message
 * instead of a hang.
 *
 * <p>Event mode ({@link #events(boolean)}, the tools' -e): a wait on a CQ that has a completion channel sleeps on
 * the channel instead, as perftest's ctx_notify_events and ibv_rc_pingpong -e do: take the event, acknowledge it,
 * re-arm the CQ, poll. A software device in caller progress mode has no one else to move its packets, so there the
 * wait looks at the channel without blocking and drives {@link Context#progress()} in between: the CPU does not
 * sleep (thread progress, rxe's default, lets it).
 */
public final class Waiter {
    private static final int CLOCK_EVERY = 1024;
    /** For {@link #awaitByte}: wait without a deadline (the stall timeout still applies). */
    public static final long NO_DEADLINE = Long.MAX_VALUE;

    private final Context ctx;
    private final long stallNanos;
    private boolean events;

    /** @param stallMillis how long a single wait may take; 0 = forever */
    public Waiter(Context ctx, long stallMillis) {
        this.ctx = ctx;
        this.stallNanos = Spin.stallNanos(stallMillis);
    }

    /** Event mode: waits on CQs with a completion channel sleep on it (see the class comment). */
    public Waiter events(boolean on) {
        events = on;
        return this;
    }

    public boolean events() {
        return events;
    }

    /** Polls until one completion is in {@code wc}. */
    public void pollOne(CompletionQueue cq, WorkCompletion wc, String what) {
        pollOne(cq, wc, what, -1);
    }

    /**
     * Polls until one completion is in {@code wc}; {@code what} and {@code n} (if &gt;= 0, appended as " #n")
     * name what is awaited in the stall message, built only on failure so the data path makes no garbage.
     */
    public void pollOne(CompletionQueue cq, WorkCompletion wc, String what, long n) {
        if (events && cq.channel() != null) {
            // perftest's latency loops: the event first, then the poll; an empty poll waits for the next event
            do {
                awaitEvent(cq, what, n);
            } while (cq.poll(wc) == 0);
            return;
        }
        if (cq.poll(wc) == 1) {
            return;
        }
        long start = System.nanoTime();
        long spins = 0;
        while (cq.poll(wc) == 0) {
            ctx.progress();
            Spin.idle(++spins);
            if ((spins & (CLOCK_EVERY - 1)) == 0) {
                checkStall(start, what, n);
            }
        }
    }

    /** Polls until at least one completion is in {@code wcs}; returns how many. */
    public int pollSome(CompletionQueue cq, WorkCompletion[] wcs, String what) {
        int n = cq.poll(wcs);
        if (n > 0) {
            return n;
        }
        if (events && cq.channel() != null) {
            // the CQ was armed before this empty poll: a completion after it raises the event
            while ((n = cq.poll(wcs)) == 0) {
                awaitEvent(cq, what, -1);
            }
            return n;
        }
        long start = System.nanoTime();
        long spins = 0;
        while ((n = cq.poll(wcs)) == 0) {
            ctx.progress();
            Spin.idle(++spins);
            if ((spins & (CLOCK_EVERY - 1)) == 0) {
                checkStall(start, what, -1);
            }
        }
        return n;
    }

    /**
     * Waits until {@code buf[index] == value} (volatile reads: the peer's RDMA WRITE lands there from another
     * thread or from the device), or until {@code deadlineNanos} (a System.nanoTime value, or {@link #NO_DEADLINE}) has passed;
     * returns false on the deadline.
     */
    public boolean awaitByte(UnsafeBuffer buf, int index, byte value, long deadlineNanos, String what, long n) {
        if (buf.getByteVolatile(index) == value) {
            return true;
        }
        long start = System.nanoTime();
        long spins = 0;
        while (buf.getByteVolatile(index) != value) {
            ctx.progress();
            Spin.idle(++spins);
            if ((spins & (CLOCK_EVERY - 1)) == 0) {
                if (deadlineNanos != NO_DEADLINE && System.nanoTime() - deadlineNanos > 0) {
                    return false;
                }
                checkStall(start, what, n);
            }
        }
        return true;
    }

    /**
     * Sleeps until {@code cq}'s channel has an event (perftest ctx_notify_events): takes it, acknowledges it and
     * re-arms the CQ for the next completion. The channel must carry only this CQ's events.
     */
    public void awaitEvent(CompletionQueue cq, String what, long n) {
        CompletionQueue got = takeEvent(cq.channel(), what, n);
        if (got != cq) {
            throw new IllegalStateException("CQ event for unknown CQ " + got.describe() + " while waiting for " + what);
        }
        got.ackEvents(1);
        got.requestNotify(false);
    }

    /**
     * The next event of {@code ch} ({@code ibv_get_cq_event}), not acknowledged: blocks, or in caller progress mode
     * drives the device between non-blocking looks. Throws after the stall timeout without an event.
     */
    public CompletionQueue takeEvent(CompletionChannel ch, String what, long n) {
        long start = System.nanoTime();
        try {
            if (!ctx.progressByCaller()) {
                long slice = stallNanos == Long.MAX_VALUE ? 60_000 : Math.max(1, stallNanos / 1_000_000);
                while (true) {
                    CompletionQueue cq = ch.getEvent(slice);
                    if (cq != null) {
                        return cq;
                    }
                    if (ch.isClosed()) {
                        throw new IllegalStateException(ch.describe() + " closed while waiting for " + what);
                    }
                    checkStall(start, what, n);
                }
            }
            long spins = 0;
            CompletionQueue cq;
            while ((cq = ch.getEvent(0)) == null) {
                ctx.progress();
                Spin.idle(++spins);
                if ((spins & (CLOCK_EVERY - 1)) == 0) {
                    checkStall(start, what, n);
                }
            }
            return cq;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for an event: " + what, e);
        }
    }

    private void checkStall(long start, String what, long n) {
        if (System.nanoTime() - start > stallNanos) {
            throw new IllegalStateException("no progress for " + stallNanos / 1_000_000 + " ms while waiting for " + what
                    + (n >= 0 ? " #" + n : "")
                    + " (peer gone? use --stall-timeout to wait longer)");
        }
    }
}
