package io.jhca.vfio;

/** VFIO_DEVICE_GET_INFO: flags ({@link VfioAbi#VFIO_DEVICE_FLAGS_RESET}, ...), number of regions and of IRQ indexes. */
public record DeviceInfo(int flags, int numRegions, int numIrqs) {

    /** Whether VFIO_DEVICE_RESET works on this device (function-level or another reset the kernel found). */
    public boolean resetSupported() {
        return (flags & VfioAbi.VFIO_DEVICE_FLAGS_RESET) != 0;
    }

    /** Whether it is a vfio-pci device. */
    public boolean pci() {
        return (flags & VfioAbi.VFIO_DEVICE_FLAGS_PCI) != 0;
    }
}
