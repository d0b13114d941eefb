package io.jhca.verbs;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A device's asynchronous event channel (the context's {@code async_fd}; {@code ibv_get_async_event} /
 * {@code ibv_ack_async_event}), in the style of {@link CompletionChannel}: a thread blocks in
 * {@link #getEvent(long)}, or a {@link java.nio.channels.Selector} waits on {@link #selectableChannel()}, readable
 * while an event is pending. Every context has exactly one, from {@link Context#asyncEventChannel()}.
 *
 * <p>Acknowledgement, as libibverbs: each event taken with {@link #getEvent(long)} must be acknowledged once with
 * {@link #ackEvent(AsyncEvent)}. A QP, CQ or SRQ with events of its own taken and not acknowledged refuses to close
 * (EBUSY naming the count; {@code ibv_destroy_qp} would wait for them, which here could only hang). Events of an
 * element that closes before they are taken go away with it, as the kernel drops them. Port and device events
 * need acknowledging too but hold nothing open. {@link Context#pollAsyncEvent()} takes from the same queue and
 * acknowledges at once.
 */
public final class AsyncEventChannel {
    private final Context context;
    private final ArrayDeque<AsyncEvent> pending = new ArrayDeque<>();
    /** Taken and not acknowledged, by identity: equal events are still separate events. */
    private final Set<AsyncEvent> unacked = Collections.newSetFromMap(new IdentityHashMap<>());
    private final ByteBuffer one = ByteBuffer.allocate(1);
    private final ByteBuffer drain = ByteBuffer.allocate(1);
    /** Opened on the first {@link #selectableChannel()}: most contexts never select. */
    private Pipe pipe;
    /** A byte sits in the pipe exactly while {@link #pending} is not empty: the selector sees a level. */
    private boolean signalled;
    private boolean closed;
    /** {@link #pending}'s size, readable without the lock: an empty {@link #poll()} (a busy loop's) takes none. */
    private volatile int queued;

    AsyncEventChannel(Context context) {
        this.context = context;
    }

    public Context context() {
        return context;
    }

    public String describe() {
        return "async event channel of " + context.describe();
    }

    /**
     * The channel to register with a {@link java.nio.channels.Selector} for {@code OP_READ}: readable while an
     * event is pending. It is non-blocking; do not read it: take events with {@link #getEvent(long)}, which
     * returns at once when the selector said readable.
     */
    public synchronized SelectableChannel selectableChannel() {
        checkOpen();
        if (pipe == null) {
            try {
                pipe = Pipe.open();
                pipe.source().configureBlocking(false); // selectors need it; reads here never block
                pipe.sink().configureBlocking(false);
            } catch (IOException e) {
                throw new UncheckedIOException(describe() + ": cannot open its pipe", e);
            }
            if (!pending.isEmpty()) {
                signal();
            }
        }
        return pipe.source();
    }

    /**
     * The next event, null if none came within {@code timeoutMillis} (0: do not wait) or the context closed.
     * The event counts as taken until {@link #ackEvent(AsyncEvent) acknowledged}.
     */
    public AsyncEvent getEvent(long timeoutMillis) throws InterruptedException {
        if (timeoutMillis < 0) {
            throw new VerbsException(VerbsException.EINVAL, "get async event: negative timeout " + timeoutMillis);
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        synchronized (this) {
            checkOpen();
            while (true) {
                AsyncEvent e = take();
                if (e != null) {
                    unacked.add(e);
                    if (e.element() != null) {
                        e.element().asyncEventTaken();
                    }
                    return e;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || closed) {
                    return null;
                }
                TimeUnit.NANOSECONDS.timedWait(this, left);
            }
        }
    }

    /** Acknowledges one event taken with {@link #getEvent(long)} ({@code ibv_ack_async_event}). */
    public synchronized void ackEvent(AsyncEvent event) {
        if (event == null) {
            throw new VerbsException(VerbsException.EINVAL, "ack async event: null event");
        }
        if (!unacked.remove(event)) {
            throw new VerbsException(VerbsException.EINVAL, "ack async event: " + event.type() + " on "
                    + event.resource() + " was not taken from " + describe() + " or was acknowledged already");
        }
        if (event.element() != null) {
            event.element().asyncEventAcked();
        }
    }

    /** Events raised and not yet taken. */
    public synchronized int pendingEvents() {
        return pending.size();
    }

    /** Events taken with {@link #getEvent(long)} and not yet acknowledged. */
    public synchronized int unackedEvents() {
        return unacked.size();
    }

    /** {@link Context#pollAsyncEvent()}: the next event, taken and acknowledged at once; null if none. */
    AsyncEvent poll() {
        if (queued == 0) {
            return null;
        }
        synchronized (this) {
            return take();
        }
    }

    /** Queues an event and wakes the waiters. */
    synchronized void post(AsyncEvent event) {
        if (closed) {
            return;
        }
        if (event.element() != null) {
            event.element().noteAsyncChannel(this);
        }
        pending.add(event);
        queued = pending.size();
        signal();
        notifyAll();
    }

    /** An element that closed takes its events that were not taken yet away with it. */
    synchronized void forget(VerbsResource element) {
        pending.removeIf(e -> e.element() == element);
        queued = pending.size();
        if (pending.isEmpty()) {
            unsignal();
        }
    }

    /** The context closed: waiters return null, the pipe closes. */
    void close() {
        synchronized (this) {
            closed = true;
            pending.clear();
            queued = 0;
            notifyAll();
        }
        Pipe p = pipe;
        if (p != null) {
            try {
                p.sink().close();
                p.source().close();
            } catch (IOException e) {
                throw new UncheckedIOException(describe() + ": cannot close its pipe", e);
            }
        }
    }

    private AsyncEvent take() {
        AsyncEvent e;
        // an element closed between the post and now: its event went with it
        do {
            e = pending.poll();
        } while (e != null && e.element() != null && e.element().isClosed());
        queued = pending.size();
        if (pending.isEmpty()) {
            unsignal();
        }
        return e;
    }

    private void checkOpen() {
        if (closed) {
            throw new VerbsException(VerbsException.EINVAL, describe() + " is closed");
        }
    }

    private void signal() {
        if (signalled || pipe == null) {
            return;
        }
        try {
            one.clear();
            pipe.sink().write(one);
        } catch (IOException e) {
            throw new UncheckedIOException(describe() + ": cannot signal its pipe", e);
        }
        signalled = true;
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
}
