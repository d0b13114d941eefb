package io.jhca.rxe.transport;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A QP's receive queue: preallocated {@link RecvWqe} slots; the posting thread fills and publishes with a
 * release store of {@code pi}, the engine consumes at {@code ci} (release store when a WQE completes).
 */
public final class RecvRing extends RecvSource {

    private static final VarHandle PI;
    private static final VarHandle CI;

    static {
        try {
            final MethodHandles.Lookup l = MethodHandles.lookup();
            PI = l.findVarHandle(RecvRing.class, "pi", long.class);
            CI = l.findVarHandle(RecvRing.class, "ci", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final RecvWqe[] slots;
    private final int mask;
    private long tail;
    private long ciCache;
    @SuppressWarnings("unused") // through PI
    private volatile long pi;
    /** Engine: the oldest WQE not completed (the one a SEND in progress fills). */
    long head;
    @SuppressWarnings("unused") // through CI
    private volatile long ci;

    public RecvRing(final int depth, final int maxSge) {
        final int n = SendRing.powerOfTwo(depth);
        slots = new RecvWqe[n];
        for (int i = 0; i < n; i++) {
            slots[i] = new RecvWqe(maxSge);
        }
        mask = n - 1;
    }

    public int capacity() {
        return slots.length;
    }

    /** Posting thread: the slot at the tail, or null if full. */
    public RecvWqe tailSlot() {
        if (tail - ciCache >= slots.length) {
            ciCache = (long) CI.getAcquire(this);
            if (tail - ciCache >= slots.length) {
                return null;
            }
        }
        return slots[(int) tail & mask];
    }

    public void advanceTail() {
        tail++;
    }

    public void publish() {
        PI.setRelease(this, tail);
    }

    // ------------------------------------------------------------------------------------------------ engine

    /** The oldest posted, not completed WQE, or null if none is posted. */
    @Override
    RecvWqe peek() {
        return head == (long) PI.getAcquire(this) ? null : slots[(int) head & mask];
    }

    @Override
    boolean hasPosted() {
        return head != (long) PI.getAcquire(this);
    }

    @Override
    void completeHead() {
        head++;
        CI.setRelease(this, head);
    }

    @Override
    void discardAll() {
        head = (long) PI.getAcquire(this);
        CI.setRelease(this, head);
    }

    @Override
    RecvWqe peekFlush() {
        return peek();
    }

    /** Posted and not yet taken (the engine's view). */
    long count() {
        return (long) PI.getAcquire(this) - head;
    }
}
