package io.jhca.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The lifetime every {@link DmaRegion} shares, for regions of this module and for those other modules make over
 * memory they do not own (a device model's view of host pages, an rxe page list): {@link #retain()} and
 * {@link #release()} count the users that need the memory to stay (a memory registration), {@link #close()} is
 * refused while any is left or a slice is open, and runs {@link #onClosed()} exactly once.
 *
 * <p>One atomic {@code state} word holds everything close/retain/slice decide on, so each is one CAS:
 * bits 30:0 references taken by {@link #retain()}, bits 61:31 open slices, bit 62 closed.
 */
public abstract class RefCountedDmaRegion implements DmaRegion {

    private static final long REFS_MASK = (1L << 31) - 1;
    private static final int SLICES_SHIFT = 31;
    private static final long SLICE_ONE = 1L << SLICES_SHIFT;
    private static final long SLICES_MASK = REFS_MASK << SLICES_SHIFT;
    private static final long CLOSED = 1L << 62;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(RefCountedDmaRegion.class, "state", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    @SuppressWarnings("unused") // through STATE
    private volatile long state;

    /** Releases what the region holds; runs once, after the state turned closed. */
    protected abstract void onClosed();

    /** The message of the exception thrown when the region is used after {@link #close()}. */
    protected String closedMessage() {
        return this + " is closed";
    }

    @Override
    public final boolean isClosed() {
        return (state & CLOSED) != 0;
    }

    @Override
    public void retain() {
        long s;
        do {
            s = state;
            if ((s & CLOSED) != 0) {
                throw closed();
            }
            if ((s & REFS_MASK) == REFS_MASK) {
                throw new IllegalStateException(this + " retained too many times: " + (s & REFS_MASK));
            }
        } while (!STATE.compareAndSet(this, s, s + 1));
    }

    @Override
    public void release() {
        long s;
        do {
            s = state;
            if ((s & CLOSED) != 0) {
                throw closed();
            }
            if ((s & REFS_MASK) == 0) {
                throw new IllegalStateException("release() without a matching retain() on " + this);
            }
        } while (!STATE.compareAndSet(this, s, s - 1));
    }

    /** References currently taken with {@link #retain()}. */
    public final long retainCount() {
        return state & REFS_MASK;
    }

    @Override
    public final void close() {
        long s;
        do {
            s = state;
            if ((s & CLOSED) != 0) {
                return;
            }
            final long refs = s & REFS_MASK;
            if (refs != 0) {
                throw new IllegalStateException("cannot close " + this + ": retained " + refs
                    + " time(s) (a memory registration or other device user still holds it); release() first");
            }
            final long slices = (s & SLICES_MASK) >>> SLICES_SHIFT;
            if (slices != 0) {
                throw new IllegalStateException("cannot close " + this + ": " + slices
                    + " slice(s) of it are still open; close them first");
            }
        } while (!STATE.compareAndSet(this, s, s | CLOSED));
        onClosed();
    }

    /** Counts a slice opened on this region (refused once closed). */
    protected final void addSlice() {
        long s;
        do {
            s = state;
            if ((s & CLOSED) != 0) {
                throw closed();
            }
            if ((s & SLICES_MASK) == SLICES_MASK) {
                throw new IllegalStateException("too many open slices of " + this);
            }
        } while (!STATE.compareAndSet(this, s, s + SLICE_ONE));
    }

    /** Called by a slice of this region when it closes. */
    protected final void removeSlice() {
        long s;
        do {
            s = state;
            if ((s & SLICES_MASK) == 0) {
                throw new IllegalStateException("no open slice to remove from " + this);
            }
        } while (!STATE.compareAndSet(this, s, s - SLICE_ONE));
    }

    /** Throws {@link IllegalStateException} with {@link #closedMessage()} once the region is closed. */
    protected final void ensureOpen() {
        if ((state & CLOSED) != 0) {
            throw closed();
        }
    }

    private IllegalStateException closed() {
        return new IllegalStateException(closedMessage());
    }
}
