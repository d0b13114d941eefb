package io.jhca.vfio;

/** VFIO_DEVICE_GET_IRQ_INFO of one IRQ index (INTx 0, MSI 1, MSI-X 2, ...): its flags and how many vectors it has. */
public record IrqInfo(int index, int flags, int count) {

    /** Whether vectors can be wired to eventfds (rdma-core's mlx5_vfio requires it for MSI-X). */
    public boolean eventfd() {
        return (flags & VfioAbi.VFIO_IRQ_INFO_EVENTFD) != 0;
    }

    public boolean maskable() {
        return (flags & VfioAbi.VFIO_IRQ_INFO_MASKABLE) != 0;
    }

    public boolean automasked() {
        return (flags & VfioAbi.VFIO_IRQ_INFO_AUTOMASKED) != 0;
    }
}
