package io.jhca.memory;

import java.nio.ByteBuffer;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A buffer view handed out by a region. It holds the region's {@link RegionMapping} so the memory stays mapped
 * while the view is reachable (an access in flight when the region closes touches mapped memory), and it is
 * rewrapped to an empty array when its region closes, so every later access fails Agrona's bounds check.
 * It cannot be rewrapped by its users: that would point it at memory whose lifetime it does not follow (or let it
 * escape its region's close); wrap a buffer of your own around it instead.
 */
final class DmaView extends UnsafeBuffer {

    private static final byte[] NO_BYTES = new byte[0];

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

    /** Points the view at nothing: capacity 0, so any index fails the bounds check. */
    void retire() {
        super.wrap(NO_BYTES);
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
