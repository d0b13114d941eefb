package io.jhca.verbs;

/**
 * A completion queue ({@code struct ibv_cq}). Polling never allocates. If more
 * completions arrive than the CQ holds, the CQ overruns: as on hardware, the CQ enters the error state, a
 * {@link AsyncEvent.Type#CQ_ERR} event is posted and every later poll throws, so no completion is ever
 * silently lost.
 *
 * <p>Threading, as rdma-core: by default a CQ may be polled by several threads; each poll call takes the CQ's
 * lock (one uncontended lock on the fast path), so every completion goes to exactly one poller. A CQ created
 * with {@link CqFlags#SINGLE_THREADED} has no lock: it belongs to the first thread that polls it, and a poll
 * from any other thread is refused with an {@link IllegalStateException} naming the CQ and both threads.
 * {@link #close()} may come from any thread once no thread polls.
 */
public abstract class CompletionQueue extends VerbsResource {
    private final Context context;
    private final int capacity;
    private final int cqn;
    private volatile boolean overrunReported;
    private CompletionChannel channel;
    /** Events taken from the channel, and how many of them were acknowledged ({@code comp_events_completed}). */
    private int eventsTaken;
    private int eventsAcked;
    /** Set by {@link Context#createCq(int, int)} before the CQ is handed out. */
    private ThreadGuard guard = ThreadGuard.of("poller", false);

    protected CompletionQueue(Context context, int cqn, int capacity) {
        super("CQ", context);
        this.context = context;
        this.cqn = cqn;
        this.capacity = capacity;
    }

    public final Context context() {
        return context;
    }

    /** Number of completions the CQ holds (at least what was asked for). */
    public final int capacity() {
        return capacity;
    }

    public final int cqn() {
        return cqn;
    }

    @Override
    public String describe() {
        return "CQ " + cqn;
    }

    final void singleThreaded(boolean single) {
        guard = ThreadGuard.of("poller", single);
    }

    /** True if this CQ was created with {@link CqFlags#SINGLE_THREADED} (no lock). */
    public final boolean singleThreaded() {
        return guard.singleThreaded();
    }

    /** The completion channel this CQ reports events to; null if it was created without one. */
    public final CompletionChannel channel() {
        return channel;
    }

    final void attach(CompletionChannel ch) {
        alsoUses(ch);
        channel = ch;
    }

    /**
     * Arms the CQ, once ({@code ibv_req_notify_cq}): the next completion added to it ({@code solicitedOnly}
     * false), or the next solicited or error completion ({@code solicitedOnly} true), raises one event on the
     * CQ's channel and disarms it. Completions already in the CQ when it is armed may or may not raise one, as
     * verbs allows; poll the CQ empty after arming to miss nothing.
     */
    public final void requestNotify(boolean solicitedOnly) {
        checkOpen();
        if (channel == null) {
            throw new VerbsException(VerbsException.EINVAL, describe() + " has no completion channel to notify");
        }
        driverRequestNotify(solicitedOnly);
    }

    /** Acknowledges {@code n} events taken from the channel for this CQ ({@code ibv_ack_cq_events}). */
    public final void ackEvents(int n) {
        synchronized (this) {
            int open = eventsTaken - eventsAcked;
            if (n < 0 || n > open) {
                throw new VerbsException(VerbsException.EINVAL,
                        describe() + ": cannot acknowledge " + n + " events, " + open + " taken and unacknowledged");
            }
            eventsAcked += n;
        }
    }

    /** Events taken from the channel and not yet acknowledged. */
    public final synchronized int unackedEvents() {
        return eventsTaken - eventsAcked;
    }

    final synchronized void eventTaken() {
        eventsTaken++;
    }

    @Override
    final void beforeDestroy() {
        int open = eventsTaken - eventsAcked;
        if (open != 0) {
            // ibv_destroy_cq waits for every event to be acknowledged; waiting here could hang, so refuse
            throw new VerbsException(VerbsException.EBUSY,
                    "cannot close " + describe() + ": " + open + " completion events not acknowledged (ackEvents)");
        }
    }

    @Override
    final void afterClose() {
        if (channel != null) {
            channel.forget(this);
        }
    }

    /** Provider side: an armed notification fired; raises the event on the channel. */
    protected final void raiseCompletionEvent() {
        CompletionChannel ch = channel;
        if (ch != null) {
            ch.raise(this);
        }
    }

    /** Provider side: arm as {@link #requestNotify(boolean)} says. */
    protected void driverRequestNotify(boolean solicitedOnly) {
        throw new VerbsException(VerbsException.EOPNOTSUPP, describe() + ": completion events not supported");
    }

    /** Polls one completion into {@code wc}: 1 if there was one, else 0. */
    public final int poll(WorkCompletion wc) {
        ThreadGuard g = guard;
        g.enter(this);
        try {
            checkOpen();
            return driverPoll(wc);
        } finally {
            g.exit();
        }
    }

    /** Polls up to {@code wcs.length} completions; returns how many were filled. */
    public final int poll(WorkCompletion[] wcs) {
        return poll(wcs, wcs.length);
    }

    /** Polls up to {@code max} completions into {@code wcs[0..max)}. */
    public final int poll(WorkCompletion[] wcs, int max) {
        ThreadGuard g = guard;
        g.enter(this);
        try {
            checkOpen();
            int n = 0;
            while (n < max && driverPoll(wcs[n]) == 1) {
                n++;
            }
            return n;
        } finally {
            g.exit();
        }
    }

    /**
     * Provider side: runs {@code action} (cleaning the CQEs of a QP that resets, say) excluded from polls of a
     * shared CQ; a single-threaded CQ is the application's to keep still.
     */
    protected final <T> T exclusive(java.util.function.Supplier<T> action) {
        ThreadGuard g = guard;
        g.enterControl();
        try {
            return action.get();
        } finally {
            g.exit();
        }
    }

    /**
     * Provider side: the CQ overran. Posts the CQ_ERR event (once) and returns the exception that every poll
     * from now on throws.
     */
    protected final VerbsException overrun() {
        String msg = describe() + " overrun: more than " + capacity + " completions were outstanding; the CQ is in error";
        if (!overrunReported) {
            overrunReported = true;
            context.postAsyncEvent(AsyncEvent.of(AsyncEvent.Type.CQ_ERR, this, msg));
        }
        return new VerbsException(VerbsException.EOVERFLOW, msg);
    }

    /** Provider side: 1 and fill {@code wc} if a completion is ready, else 0. */
    protected abstract int driverPoll(WorkCompletion wc);
}
