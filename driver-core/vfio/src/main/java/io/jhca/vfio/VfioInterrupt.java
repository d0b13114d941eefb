package io.jhca.vfio;

/**
 * One interrupt vector of a device (an MSI or MSI-X vector, or INTx) wired to an eventfd with
 * VFIO_DEVICE_SET_IRQS. Wait for it with {@link #await(long)}, check it with {@link #poll()}, or hand
 * {@link #fd()} to an event loop. Closing it unwires the vector (the fd -1) and closes the eventfd.
 */
public final class VfioInterrupt extends EventFd {

    private final VfioDevice device;
    private final int index;
    private final int vector;

    VfioInterrupt(final VfioDevice device, final Syscalls sys, final int index, final int vector) {
        super(sys, device.name());
        this.device = device;
        this.index = index;
        this.vector = vector;
    }

    /** The IRQ index (INTx 0, MSI 1, MSI-X 2). */
    public int index() {
        return index;
    }

    /** The vector within the index. */
    public int vector() {
        return vector;
    }

    @Override
    public void close() {
        device.disableInterrupt(this);
    }

    @Override
    public String toString() {
        return device.name() + " irq index " + index + " vector " + vector + (isClosed() ? " (closed)" : "");
    }
}
