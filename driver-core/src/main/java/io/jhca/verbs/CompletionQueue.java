package io.jhca.verbs;

/**
 * A completion queue ({@code struct ibv_cq}). Polled by one thread; polling never allocates. If more
 * completions arrive than the CQ holds, the CQ overruns: as on hardware, the CQ enters the error state, a
 * {@link AsyncEvent.Type#CQ_ERR} event is posted and every later poll throws, so no completion is ever
 * silently lost.
 */
public abstract class CompletionQueue extends VerbsResource {
    private final Context context;
    private final int capacity;
    private final int cqn;
    private volatile boolean overrunReported;

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

    /** Polls one completion into {@code wc}: 1 if there was one, else 0. */
    public final int poll(WorkCompletion wc) {
        checkOpen();
        return driverPoll(wc);
    }

    /** Polls up to {@code wcs.length} completions; returns how many were filled. */
    public final int poll(WorkCompletion[] wcs) {
        return poll(wcs, wcs.length);
    }

    /** Polls up to {@code max} completions into {@code wcs[0..max)}. */
    public final int poll(WorkCompletion[] wcs, int max) {
        checkOpen();
        int n = 0;
        while (n < max && driverPoll(wcs[n]) == 1) {
            n++;
        }
        return n;
    }

    /**
     * Provider side: the CQ overran. Posts the CQ_ERR event (once) and returns the exception that every poll
     * from now on throws.
     */
    protected final VerbsException overrun() {
        String msg = describe() + " overrun: more than " + capacity + " completions were outstanding; the CQ is in error";
        if (!overrunReported) {
            overrunReported = true;
            context.postAsyncEvent(new AsyncEvent(AsyncEvent.Type.CQ_ERR, describe(), msg));
        }
        return new VerbsException(VerbsException.EOVERFLOW, msg);
    }

    /** Provider side: 1 and fill {@code wc} if a completion is ready, else 0. */
    protected abstract int driverPoll(WorkCompletion wc);
}
