package io.jhca.cm;

import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Where the events of its {@link CmId}s arrive ({@code struct rdma_event_channel}): polled without waiting, waited
 * on with a timeout, or handed to a selector-style loop through {@link #available()}. Events come in the order they
 * happen for each ID.
 */
public final class CmEventChannel implements AutoCloseable {
    private final LinkedBlockingQueue<CmEvent> events = new LinkedBlockingQueue<>();
    private volatile boolean closed;

    public static CmEventChannel create() {
        return new CmEventChannel();
    }

    /** A new ID on this channel in the TCP port space ({@code rdma_create_id(..., RDMA_PS_TCP)}), RC. */
    public CmId createId() {
        checkOpen();
        return new CmId(this);
    }

    /** The next event, or null if none is waiting. */
    public CmEvent poll() {
        return events.poll();
    }

    /** The next event, waiting up to the timeout; null if none came ({@code rdma_get_cm_event} with a timeout). */
    public CmEvent get(long timeout, TimeUnit unit) throws InterruptedException {
        checkOpen();
        return events.poll(timeout, unit);
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
    public int available() {
        return events.size();
    }

    void post(CmEvent e) {
        if (!closed) {
            events.add(e);
        }
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the event channel is closed");
        }
    }

    @Override
    public void close() {
        closed = true;
        events.clear();
    }
}
