package io.jhca.memory;

import java.nio.ByteBuffer;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A buffer view handed out by a region. It holds the region's {@link RegionMapping} so the memory stays mapped
 * while the view is reachable (an access in flight when the region closes touches mapped memory), and its capacity
 * drops to 0 when its region closes, so every later access fails Agrona's bounds check.
 * It cannot be rewrapped by its users: that would point it at memory whose lifetime it does not follow (or let it
 * escape its region's close); wrap a buffer of your own around it instead.
 */
final class DmaView extends UnsafeBuffer {

    /** Keeps the address range mapped while this view is reachable; never read. */
    @SuppressWarnings("unused")
    private final RegionMapping mapping;
    /** The region or slice whose close retires this view. */
    final AbstractDmaRegion owner;
    /** False only while the superclass constructor wraps the view (it calls wrap(long, int)). */
    private final boolean sealed;

    DmaView(final RegionMapping mapping, final AbstractDmaRegion owner, final long address, final int length) {
        super(address, length);
        this.mapping = mapping;
        this.owner = owner;
        this.sealed = true;
    }

    /**
     * Capacity 0 at the same address, so any index fails the bounds check. The address must not change: a reader
     * racing this store may see the new capacity with the old address or the old capacity with the new address
     * (the fields are written one by one), and only the same address, which stays mapped while this view is
     * reachable, makes every such mix harmless. (Rewrapping to an empty array let a racing reader combine the
     * array's base offset with the old capacity: a SIGSEGV about one run in four of the racing-close probe.)
     */
    void retire() {
        super.wrap(addressOffset(), 0);
    }

    private void refuseWrap() {
        if (sealed) {
            throw new UnsupportedOperationException("a DMA region's buffer view cannot be rewrapped (it follows the"
                + " region's lifetime); wrap an UnsafeBuffer of your own instead");
        }
    }

    @Override
    public void wrap(final long address, final int length) {
        refuseWrap();
        super.wrap(address, length);
    }

    @Override
    public void wrap(final byte[] buffer) {
        refuseWrap();
        super.wrap(buffer);
    }

    @Override
    public void wrap(final byte[] buffer, final int offset, final int length) {
        refuseWrap();
        super.wrap(buffer, offset, length);
    }

    @Override
    public void wrap(final ByteBuffer buffer) {
        refuseWrap();
        super.wrap(buffer);
    }

    @Override
    public void wrap(final ByteBuffer buffer, final int offset, final int length) {
        refuseWrap();
        super.wrap(buffer, offset, length);
    }

    @Override
    public void wrap(final DirectBuffer buffer) {
        refuseWrap();
        super.wrap(buffer);
    }

    @Override
    public void wrap(final DirectBuffer buffer, final int offset, final int length) {
        refuseWrap();
        super.wrap(buffer, offset, length);
    }
}
