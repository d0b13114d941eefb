package io.jhca.memory;

/**
 * A window into a parent region: same memory, same translator, the parent's lifetime. While a slice is open
 * its parent refuses to close; retaining a slice retains the parent as well. Closing a slice releases nothing
 * but the slice.
 */
final class DmaSlice extends AbstractDmaRegion {

    private final AbstractDmaRegion parent;

    DmaSlice(final AbstractDmaRegion parent, final long offset, final long length) {
        super(parent.address + offset, length, parent.pageSize, parent.translator);
        this.parent = parent;
    }

    @Override
    public void retain() {
        ensureOpen();
        parent.retain();
        try {
            super.retain();
        } catch (final RuntimeException e) {
            parent.release();
            throw e;
        }
    }

    @Override
    public void release() {
        super.release();
        parent.release();
    }

    @Override
    RegionMapping mapping() {
        return parent.mapping();
    }

    @Override
    void onClose() {
        try {
            // the parent is open (it cannot close while this slice is), so its mapping is there
            parent.mapping().retireViews(this);
        } finally {
            parent.removeSlice();
        }
    }

    @Override
    String kind() {
        return "slice";
    }
}
