package io.jhca.memory;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Lifetime and bounds logic shared by mapped regions and their slices.
 *
 * <p>One atomic {@code state} word holds everything close/retain/slice decide on, so each is one CAS:
 * bits 30:0 references taken by {@link #retain()}, bits 61:31 open slices, bit 62 closed. Accessors read only
 * final fields after a volatile read of that word (a plain load on x86).
 */
abstract class AbstractDmaRegion implements DmaRegion {

    private static final long REFS_MASK = (1L << 31) - 1;
    private static final int SLICES_SHIFT = 31;
    private static final long SLICE_ONE = 1L << SLICES_SHIFT;
    private static final long SLICES_MASK = REFS_MASK << SLICES_SHIFT;
    private static final long CLOSED = 1L << 62;

    private static final VarHandle STATE;

    static {
        try {
            STATE = MethodHandles.lookup().findVarHandle(AbstractDmaRegion.class, "state", long.class);
        } catch (final ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    final long address;
    final long length;
    final long pageSize;
    final IovaTranslator translator;
    /** The whole-region view, made at the first {@link #buffer()}; dropped at close. */
    private volatile DmaView buffer;
    @SuppressWarnings("unused") // through STATE
    private volatile long state;

    AbstractDmaRegion(final long address, final long length, final long pageSize, final IovaTranslator translator) {
        this.address = address;
        this.length = length;
        this.pageSize = pageSize;
        this.translator = translator;
    }

    /** The mapping behind this region's memory; null once the region owning the mapping has closed. */
    abstract RegionMapping mapping();

    /** Releases what this region holds; runs once, after the state turned closed. */
    abstract void onClose();

    /** "region" or "slice", for messages. */
    abstract String kind();

    @Override
    public final long address() {
        ensureOpen();
        return address;
    }

    @Override
    public final long length() {
        ensureOpen();
        return length;
    }

    @Override
    public final long pageSize() {
        ensureOpen();
        return pageSize;
    }

    @Override
    public final long iova(final long offset) {
        ensureOpen();
        if (offset < 0 || offset >= length) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside DMA " + kind() + " of " + length + " bytes");
        }
        return translator.toIova(address + offset);
    }

    /**
     * The whole-region view, the same object on every call. Like every view it throws on access once the
     * region is closed, and it keeps the memory mapped while reachable (see {@link RegionMapping}).
     */
    @Override
    public final UnsafeBuffer buffer() {
        ensureOpen();
        final DmaView whole = buffer;
        if (whole != null) {
            return whole;
        }
        if (length > Integer.MAX_VALUE) {
            throw new IllegalStateException("DMA " + kind() + " of " + length
                + " bytes is longer than one buffer can cover (2 GiB - 1); use buffer(offset, length)");
        }
        synchronized (this) {
            if (buffer == null) {
                buffer = newView(address, (int) length);
            }
            return buffer;
        }
    }

    /**
     * A new view over {@code [offset, offset + length)}; allocates, so call it on the control path. After close
     * the view throws {@link IndexOutOfBoundsException} on every access instead of touching unmapped memory.
     */
    @Override
    public final UnsafeBuffer buffer(final long offset, final int length) {
        ensureOpen();
        checkRange(offset, length);
        return newView(address + offset, length);
    }

    private DmaView newView(final long viewAddress, final int viewLength) {
        final RegionMapping mapping = mapping();
        if (mapping == null) {
            throw closed();
        }
        return mapping.view(this, viewAddress, viewLength);
    }

    @Override
    public final DmaRegion slice(final long offset, final long length) {
        ensureOpen();
        checkRange(offset, length);
        addSlice();
        try {
            return new DmaSlice(this, offset, length);
        } catch (final RuntimeException | Error e) {
            removeSlice();
            throw e;
        }
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
                throw new IllegalStateException("DMA " + kind() + " retained too many times: " + (s & REFS_MASK));
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
    final long retainCount() {
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
        // The views (this one included) are retired by onClose through the mapping; the region lets go of it.
        buffer = null;
        onClose();
    }

    private void addSlice() {
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
    final void removeSlice() {
        long s;
        do {
            s = state;
            if ((s & SLICES_MASK) == 0) {
                throw new IllegalStateException("no open slice to remove from " + this);
            }
        } while (!STATE.compareAndSet(this, s, s - SLICE_ONE));
    }

    final void ensureOpen() {
        if ((state & CLOSED) != 0) {
            throw closed();
        }
    }

    private IllegalStateException closed() {
        return new IllegalStateException("DMA " + kind() + " closed (was " + describe() + ")");
    }

    private void checkRange(final long offset, final long rangeLength) {
        // offset > length - rangeLength cannot overflow: both sides are within [0, length] once the signs are checked
        if (offset < 0 || rangeLength < 0 || offset > length - rangeLength) {
            throw new IndexOutOfBoundsException("range [offset " + offset + ", length " + rangeLength
                + ") outside DMA " + kind() + " of " + length + " bytes");
        }
    }

    final String describe() {
        return "0x" + Long.toHexString(address) + "+" + length + ", page " + pageSize + ", iova " + translator.name();
    }

    @Override
    public String toString() {
        return "DMA " + kind() + "[" + describe() + (isClosed() ? ", closed" : "") + "]";
    }
}
