package io.jhca.memory;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A buffer view handed out by a region. It holds the region's {@link RegionMapping} so the memory stays mapped
 * while the view is reachable (an access in flight when the region closes touches mapped memory), and it is
 * rewrapped to an empty array when its region closes, so every later access fails Agrona's bounds check.
 */
final class DmaView extends UnsafeBuffer {

    private static final byte[] NO_BYTES = new byte[0];

    /** Keeps the address range mapped while this view is reachable; never read. */
    @SuppressWarnings("unused")
    private final RegionMapping mapping;
    /** The region or slice whose close retires this view. */
    final AbstractDmaRegion owner;

    DmaView(final RegionMapping mapping, final AbstractDmaRegion owner, final long address, final int length) {
        super(address, length);
        this.mapping = mapping;
        this.owner = owner;
    }

    /** Points the view at nothing: capacity 0, so any index fails the bounds check. */
    void retire() {
        wrap(NO_BYTES);
    }
}
