package io.jhca.cm;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.SelectableChannel;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;

/**
 * Where the events of its {@link CmId}s arrive ({@code struct rdma_event_channel}): polled without waiting, waited
 * on with a timeout, or watched by a {@link java.nio.channels.Selector} through {@link #selectableChannel()}
 * (readable while an event waits, as librdmacm's channel fd is). Events come in the order they happen for each ID.
 */
public final class CmEventChannel implements AutoCloseable {
    private final ArrayDeque<CmEvent> events = new ArrayDeque<>();
    private final Pipe pipe;
    private final ByteBuffer one = ByteBuffer.allocate(1);
    private final ByteBuffer drain = ByteBuffer.allocate(1);
    /** A byte sits in the pipe exactly while events wait: the selector sees a level, not edges. */
    private boolean signalled;
    private boolean closed;

    private CmEventChannel() {
        try {
            pipe = Pipe.open();
            pipe.source().configureBlocking(false);
            pipe.sink().configureBlocking(false);
        } catch (IOException e) {
            throw new UncheckedIOException("CM event channel: cannot open its pipe", e);
        }
    }

    public static CmEventChannel create() {
        return new CmEventChannel();
    }

    /** A new ID on this channel in the TCP port space ({@code rdma_create_id(..., RDMA_PS_TCP)}), RC. */
    public CmId createId() {
        checkOpen();
        return new CmId(this);
    }

    /**
     * The channel to register with a selector for {@code OP_READ}: readable while an event waits. Do not read it;
     * take the events with {@link #poll()}.
     */
    public SelectableChannel selectableChannel() {
        return pipe.source();
    }

    /** The next event, or null if none is waiting. */
    public synchronized CmEvent poll() {
        CmEvent e = events.poll();
        if (events.isEmpty()) {
            unsignal();
        }
        return e;
    }

    /** The next event, waiting up to the timeout; null if none came ({@code rdma_get_cm_event} with a timeout). */
    public synchronized CmEvent get(long timeout, TimeUnit unit) throws InterruptedException {
        checkOpen();
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (events.isEmpty()) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || closed) {
                return null;
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return poll();
    }

    /** The next event of {@code type}, waiting up to {@code millis}; any other event first is an error naming it. */
    public CmEvent expect(CmEventType type, long millis) throws InterruptedException {
        CmEvent e = get(millis, TimeUnit.MILLISECONDS);
        if (e == null) {
            throw new CmException("no " + type + " event within " + millis + " ms");
        }
        if (e.type() != type) {
            throw new CmException("expected " + type + ", got " + e);
        }
        return e;
    }

    /** Events waiting. */
    public synchronized int available() {
        return events.size();
    }

    synchronized void post(CmEvent e) {
        if (closed) {
            return;
        }
        events.add(e);
        if (!signalled) {
            try {
                one.clear();
                pipe.sink().write(one);
            } catch (IOException x) {
                throw new UncheckedIOException("CM event channel: cannot signal its pipe", x);
            }
            signalled = true;
        }
        notifyAll();
    }

    private void unsignal() {
        if (!signalled) {
            return;
        }
        try {
            drain.clear();
            pipe.source().read(drain);
        } catch (IOException e) {
            throw new UncheckedIOException("CM event channel: cannot drain its pipe", e);
        }
        signalled = false;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the event channel is closed");
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        events.clear();
        try {
            pipe.sink().close();
            pipe.source().close();
        } catch (IOException e) {
            throw new UncheckedIOException("CM event channel: cannot close its pipe", e);
        }
        notifyAll();
    }
}
