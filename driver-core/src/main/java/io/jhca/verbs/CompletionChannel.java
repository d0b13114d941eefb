package io.jhca.verbs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * A completion event channel ({@code ibv_create_comp_channel}): CQs created on it report, once each time they
 * were armed with {@link CompletionQueue#requestNotify(boolean)}, that a completion arrived. A thread blocks in
 * {@link #getEvent(long)} ({@code ibv_get_cq_event}); or a {@link java.nio.channels.Selector} waits on
 * {@link #selectableChannel()}, readable while an event is pending, together with sockets and other channels.
 * Every event taken must be acknowledged with {@link CompletionQueue#ackEvents(int)} before the CQ can close.
 * The channel refuses to close while CQs use it.
 */
public final class CompletionChannel extends VerbsResource {
    private final Context context;
    private final ArrayDeque<CompletionQueue> pending = new ArrayDeque<>();
    private final Pipe pipe;
    private final ByteBuffer one = ByteBuffer.allocate(1);
    private final ByteBuffer drain = ByteBuffer.allocate(1);
    /** A byte sits in the pipe exactly while {@link #pending} is not empty: the selector sees a level. */
    private boolean signalled;

    CompletionChannel(Context context) {
        super("completion channel", context);
        this.context = context;
        try {
            pipe = Pipe.open();
            pipe.source().configureBlocking(false); // selectors need it; reads here never block
            pipe.sink().configureBlocking(false);
        } catch (IOException e) {
            throw new UncheckedIOException("completion channel: cannot open its pipe", e);
        }
    }

    public Context context() {
        return context;
    }

    /**
     * The channel to register with a {@link java.nio.channels.Selector} for {@code OP_READ}: readable while an
     * event is pending. It is non-blocking; do not read it: take events with {@link #getEvent(long)}, which
     * returns at once when the selector said readable.
     */
    public SelectableChannel selectableChannel() {
        return pipe.source();
    }

    /**
     * The next event: the CQ that was armed and got a completion; null if none came within
     * {@code timeoutMillis} (0: do not wait). Each event returned counts until acknowledged on its CQ.
     */
    public CompletionQueue getEvent(long timeoutMillis) throws InterruptedException {
        if (timeoutMillis < 0) {
            throw new VerbsException(VerbsException.EINVAL, "get CQ event: negative timeout " + timeoutMillis);
        }
        checkOpen();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        synchronized (this) {
            while (pending.isEmpty()) {
                long left = deadline - System.nanoTime();
                if (left <= 0 || isClosed()) {
                    return null;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
            CompletionQueue cq = pending.poll();
            if (pending.isEmpty()) {
                unsignal();
            }
            cq.eventTaken();
            return cq;
        }
    }

    /** Events raised and not yet taken. */
    public synchronized int pendingEvents() {
        return pending.size();
    }

    /** Called by a CQ whose armed notification fired. */
    synchronized void raise(CompletionQueue cq) {
        if (isClosed()) {
            return;
        }
        pending.add(cq);
        if (!signalled) {
            try {
                one.clear();
                pipe.sink().write(one);
            } catch (IOException e) {
                throw new UncheckedIOException(describe() + ": cannot signal its pipe", e);
            }
            signalled = true;
        }
        notifyAll();
    }

    /** A closing CQ takes its events that were raised but not taken away with it (as the kernel does). */
    synchronized void forget(CompletionQueue cq) {
        pending.removeIf(q -> q == cq);
        if (pending.isEmpty()) {
            unsignal();
        }
    }

    private void unsignal() {
        if (!signalled) {
            return;
        }
        try {
            drain.clear();
            pipe.source().read(drain);
        } catch (IOException e) {
            throw new UncheckedIOException(describe() + ": cannot drain its pipe", e);
        }
        signalled = false;
    }

    @Override
    protected void destroy() {
        try {
            pipe.sink().close();
            pipe.source().close();
        } catch (IOException e) {
            throw new UncheckedIOException(describe() + ": cannot close its pipe", e);
        }
        synchronized (this) {
            notifyAll();
        }
    }
}
