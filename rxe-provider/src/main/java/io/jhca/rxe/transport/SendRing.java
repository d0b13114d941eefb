package io.jhca.rxe.transport;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * A QP's send queue: a power-of-two ring of preallocated {@link SendWqe} slots with monotonically growing
 * 64-bit indices. The posting thread fills slots at {@code tail} and publishes a batch with a release store of
 * {@code pi} (the doorbell); the engine reads {@code pi} with an acquire load, sends from {@code reqIndex},
 * completes at {@code compIndex} and hands slots back with a release store of {@code ci}.
 */
public final class SendRing {

    private static final VarHandle PI;
    private static final VarHandle CI;

    static {
        try {
            final MethodHandles.Lookup l = MethodHandles.lookup();
            PI = l.findVarHandle(SendRing.class, "pi", long.class);
            CI = l.findVarHandle(SendRing.class, "ci", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SendWqe[] slots;
    private final int mask;
    // posting thread
    private long tail;
    private long ciCache;
    @SuppressWarnings("unused") // through PI
    private volatile long pi;
    // engine
    /** Next WQE the requester works on. */
    long reqIndex;
    /** Oldest WQE not completed. */
    long compIndex;
    @SuppressWarnings("unused") // through CI
    private volatile long ci;

    /** At least {@code depth} slots, each with room for {@code maxSge} SGEs and {@code maxInline} inline bytes. */
    public SendRing(final int depth, final int maxSge, final int maxInline) {
        final int n = powerOfTwo(depth);
        slots = new SendWqe[n];
        for (int i = 0; i < n; i++) {
            slots[i] = new SendWqe(maxSge, maxInline);
        }
        mask = n - 1;
    }

    static int powerOfTwo(final int depth) {
        int n = 1;
        while (n < Math.max(1, depth)) {
            n <<= 1;
        }
        return n;
    }

    public int capacity() {
        return slots.length;
    }

    // ------------------------------------------------------------------------------------- posting thread

    /** The slot at the tail if there is room for one more WQE, else null. */
    public SendWqe tailSlot() {
        if (tail - ciCache >= slots.length) {
            ciCache = (long) CI.getAcquire(this);
            if (tail - ciCache >= slots.length) {
                return null;
            }
        }
        return slots[(int) tail & mask];
    }

    /** The slot just returned by {@link #tailSlot()} is complete. */
    public void advanceTail() {
        tail++;
    }

    /** Doorbell: the engine may now see every slot up to the tail. */
    public void publish() {
        PI.setRelease(this, tail);
    }

    /** Forgets unpublished slots (a dropped batch). */
    public void rollback() {
        tail = (long) PI.getOpaque(this);
    }

    // ------------------------------------------------------------------------------------------------ engine

    long published() {
        return (long) PI.getAcquire(this);
    }

    SendWqe at(final long index) {
        return slots[(int) index & mask];
    }

    /** The head WQE completed: hand its slot back. */
    void completeHead() {
        compIndex++;
        CI.setRelease(this, compIndex);
    }

    /** Drops everything published (modify to RESET): nothing completes. */
    void discardAll() {
        final long p = published();
        reqIndex = p;
        compIndex = p;
        CI.setRelease(this, p);
    }
}
