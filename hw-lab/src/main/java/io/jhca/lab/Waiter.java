package io.jhca.lab;

import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.WorkCompletion;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Busy-waits for completions or for a byte in memory, driving the device's progress from the waiting thread
 * (needed when a software device runs without its own thread; a no-op for hardware). Allocates nothing while
 * waiting. A wait that sees no progress for the stall timeout throws, so a lost peer ends a run with a message
 * instead of a hang.
 */
public final class Waiter {
    private static final int CLOCK_EVERY = 1024;
    /** For {@link #awaitByte}: wait without a deadline (the stall timeout still applies). */
    public static final long NO_DEADLINE = Long.MAX_VALUE;

    private final Context ctx;
    private final long stallNanos;

    /** @param stallMillis how long a single wait may take; 0 = forever */
    public Waiter(Context ctx, long stallMillis) {
        this.ctx = ctx;
        this.stallNanos = stallMillis <= 0 ? Long.MAX_VALUE : stallMillis * 1_000_000L;
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

    private void checkStall(long start, String what, long n) {
        if (System.nanoTime() - start > stallNanos) {
            throw new IllegalStateException("no progress for " + stallNanos / 1_000_000 + " ms while waiting for " + what
                    + (n >= 0 ? " #" + n : "")
                    + " (peer gone? use --stall-timeout to wait longer)");
        }
    }
}
