package io.jhca.memory;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Bounds and views shared by mapped regions and their slices, over the lifetime of {@link RefCountedDmaRegion}.
 * Accessors read only final fields after a volatile read of its state word (a plain load on x86).
 */
abstract class AbstractDmaRegion extends RefCountedDmaRegion {

    final long address;
    final long length;
    final long pageSize;
    final IovaTranslator translator;
    /** The whole-region view, made at the first {@link #buffer()}; dropped at close. */
    private volatile DmaView buffer;

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
            throw new IllegalStateException(closedMessage());
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

    /** The views (this one included) are retired by onClose through the mapping; the region lets go of it. */
    @Override
    protected final void onClosed() {
        buffer = null;
        onClose();
    }

    @Override
    protected final String closedMessage() {
        return "DMA " + kind() + " closed (was " + describe() + ")";
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
