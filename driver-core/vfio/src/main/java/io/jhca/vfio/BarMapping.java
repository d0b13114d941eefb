package io.jhca.vfio;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.MmioWindow;

/**
 * A BAR mmapped from the device fd (uncached: vfio-pci maps BARs with pgprot_noncached). Registers are
 * reached either through {@link #window()}, the project's big-endian {@link MmioWindow} (ConnectX registers
 * are big-endian), or through the little-endian accessors here (most PCI devices, e.g. QEMU's edu and NVMe).
 * Every access is one aligned access of its full width, bounds-checked first.
 *
 * <p>After {@link #close()} (or the device's close) the memory is unmapped and every accessor, including
 * those of a window handed out earlier, throws instead of touching it.
 */
public final class BarMapping implements AutoCloseable {

    private static final boolean LITTLE = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final byte[] NOTHING = new byte[0];

    private final VfioDevice device;
    private final int index;
    private final long address;
    private final int length;
    private final UnsafeBuffer buffer;
    private final MmioWindow window;
    private boolean closed;

    BarMapping(final VfioDevice device, final int index, final long address, final int length) {
        this.device = device;
        this.index = index;
        this.address = address;
        this.length = length;
        this.buffer = new UnsafeBuffer(address, length);
        this.window = new MmioWindow(buffer);
    }

    /** The region index (0-5 for BAR0-5). */
    public int index() {
        return index;
    }

    /** Bytes mapped. */
    public int length() {
        return length;
    }

    /** Virtual address of the mapping. */
    public long address() {
        ensureOpen();
        return address;
    }

    /** The mapping as the project's MMIO window (big-endian register accessors, doorbells). */
    public MmioWindow window() {
        ensureOpen();
        return window;
    }

    /** One aligned 4-byte load at {@code offset}, little-endian. */
    public int read32(final int offset) {
        check(offset, 4);
        final int raw = buffer.getIntVolatile(offset);
        return LITTLE ? raw : Integer.reverseBytes(raw);
    }

    /** One aligned 4-byte store at {@code offset}, little-endian. */
    public void write32(final int offset, final int value) {
        check(offset, 4);
        buffer.putIntVolatile(offset, LITTLE ? value : Integer.reverseBytes(value));
    }

    /** One aligned 8-byte load at {@code offset}, little-endian. */
    public long read64(final int offset) {
        check(offset, 8);
        final long raw = buffer.getLongVolatile(offset);
        return LITTLE ? raw : Long.reverseBytes(raw);
    }

    /** One aligned 8-byte store at {@code offset}, little-endian. */
    public void write64(final int offset, final long value) {
        check(offset, 8);
        buffer.putLongVolatile(offset, LITTLE ? value : Long.reverseBytes(value));
    }

    private void check(final int offset, final int width) {
        ensureOpen();
        if (offset < 0 || offset > length - width) {
            throw new IndexOutOfBoundsException(device.name() + ": BAR" + index + " access [0x" + Integer.toHexString(offset)
                + ", +" + width + ") outside 0x" + Integer.toHexString(length) + " bytes");
        }
        if ((offset & (width - 1)) != 0) {
            throw new IllegalArgumentException(device.name() + ": BAR" + index + " access of " + width
                + " bytes at 0x" + Integer.toHexString(offset) + " is not aligned");
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw VfioException.refused(device.name(), "BAR" + index, "the mapping is closed");
        }
    }

    public boolean isClosed() {
        return closed;
    }

    /** Unmaps the BAR. Closing twice is harmless. */
    @Override
    public void close() {
        device.unmapBar(this);
    }

    /** Called by the device: detaches every view, then munmaps. */
    void release(final Syscalls sys) {
        if (closed) {
            return;
        }
        closed = true;
        // The window's buffer now fails its bounds check instead of touching unmapped memory.
        buffer.wrap(NOTHING);
        if (sys.munmap(address, length) < 0) {
            throw new VfioException(device.name(), "munmap BAR" + index, sys.errno(), null);
        }
    }

    @Override
    public String toString() {
        return device.name() + " BAR" + index + "[" + (closed ? "closed" : "0x" + Long.toHexString(address) + "+0x"
            + Integer.toHexString(length)) + "]";
    }
}
