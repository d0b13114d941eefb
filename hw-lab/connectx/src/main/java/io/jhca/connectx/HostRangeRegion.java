package io.jhca.connectx;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;
import io.jhca.memory.RefCountedDmaRegion;

/**
 * A view of host memory that some other owner mapped: in the model, the pages of an mkey already resolved through its
 * {@link Iommu}, handed to the rxe transport so it can register the range under the mkey's key (IOVAs are then the
 * host addresses: the rxe engine copies with virtual addresses and never asks for IOVAs); on the driver side of a
 * shared RAM file, a block carved from it ({@link GuestRam#allocate}, IOVA = guest-physical address). It does not own
 * the memory: closing it marks the view closed and tells the owner once (the lifetime is
 * {@link RefCountedDmaRegion}'s). Its slices are views of their own, not counted by it.
 */
final class HostRangeRegion extends RefCountedDmaRegion {

    private final long address;
    private final long length;
    private final long iovaBase;
    private final Runnable onClose;

    HostRangeRegion(long address, long length) {
        this(address, length, address, null);
    }

    /** A range whose first byte the device reaches at {@code iovaBase}; {@code onClose} (or null) runs at close. */
    HostRangeRegion(long address, long length, long iovaBase, Runnable onClose) {
        if (address == 0 || length < 0 || address + length < address) {
            throw new IllegalArgumentException(String.format("bad host range 0x%x + %d", address, length));
        }
        this.address = address;
        this.length = length;
        this.iovaBase = iovaBase;
        this.onClose = onClose;
    }

    @Override
    protected String closedMessage() {
        return "host range view is closed";
    }

    @Override
    protected void onClosed() {
        if (onClose != null) {
            onClose.run();
        }
    }

    private void checkRange(long offset, long len) {
        if (offset < 0 || len < 0 || offset > length - len) {
            throw new IndexOutOfBoundsException("[" + offset + ", +" + len + ") outside a host range of " + length
                    + " bytes");
        }
    }

    @Override
    public long address() {
        ensureOpen();
        return address;
    }

    @Override
    public long length() {
        ensureOpen();
        return length;
    }

    @Override
    public long pageSize() {
        return 4096;
    }

    @Override
    public long iova(long offset) {
        ensureOpen();
        if (offset < 0 || offset >= length) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside a host range of " + length + " bytes");
        }
        return iovaBase + offset;
    }

    @Override
    public UnsafeBuffer buffer() {
        ensureOpen();
        if (length > Integer.MAX_VALUE) {
            throw new IllegalStateException("host range of " + length + " bytes is longer than one buffer");
        }
        return new UnsafeBuffer(address, (int) length);
    }

    @Override
    public UnsafeBuffer buffer(long offset, int len) {
        ensureOpen();
        checkRange(offset, len);
        return new UnsafeBuffer(address + offset, len);
    }

    @Override
    public DmaRegion slice(long offset, long len) {
        ensureOpen();
        checkRange(offset, len);
        return new HostRangeRegion(address + offset, len, iovaBase + offset, null);
    }

    @Override
    public String toString() {
        return iovaBase == address ? String.format("host[0x%x, +%d)", address, length)
                : String.format("host[0x%x, +%d) at IOVA 0x%x", address, length, iovaBase);
    }
}
