package io.jhca.mlx5.spi;

import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaRegion;

import java.net.InetAddress;
import java.util.List;

/**
 * A ConnectX PCI function as the driver sees it: BAR0 (initialization segment, command doorbell, UAR pages)
 * and a way to give the device DMA access to host memory. Backends: vfio (a real device bound to vfio-pci,
 * package {@code io.jhca.mlx5.vfio}) and the ConnectX model (module jhca-connectx, package {@code io.jhca.connectx}), found through
 * {@link Mlx5FunctionSource}: in process, BAR0 is off-heap memory its firmware thread watches; out of process
 * ({@code io.jhca.connectx.ModelProcess}), BAR0 is a shared-memory file both processes map and DMA goes through a
 * file standing for the machine's RAM, IOVA = offset in it. The driver never depends on a backend.
 *
 * <p>The driver owns everything above this line: it brings the function up through the command queue,
 * hands the firmware its pages, creates every object and formats every WQE itself.
 */
public interface Mlx5Function extends AutoCloseable {

    /** The device name the verbs API shows, e.g. "mlx5_0". */
    String name();

    /** Where the function is: a PCI address ("0000:03:00.0") or a model's name ("sim:0"). */
    String location();

    /**
     * The function's PCI device ID (0x1017 for a ConnectX-5 PF, mlx5.md section 5), what ibv_devinfo shows as
     * vendor_part_id (the kernel's mlx5_ib reports {@code pdev->device}); 0 if the function has none.
     */
    default int pciDeviceId() {
        return 0;
    }

    /** The whole of BAR0, mapped: init segment at offset 0, UAR page n at n * 4096. */
    MmioWindow bar0();

    /**
     * Pinned memory the device can reach by DMA (command queue, mailboxes, firmware pages, rings, doorbell
     * records), with its IOVAs. The vfio backend maps it into the IOMMU; the model uses identity IOVAs.
     */
    DmaRegion allocateDma(long bytes);

    /**
     * Makes a user region reachable by the device before it is registered as an MR (vfio: VFIO_IOMMU_MAP_DMA;
     * the model: nothing). The IOVA of each byte is then {@link #deviceAddress}.
     */
    void mapForDevice(DmaRegion region);

    /**
     * The IOVA of the byte at {@code offset} of a region this function allocated or mapped with {@link #mapForDevice}.
     * A region's own translation ({@code region.iova}) is the answer unless the function mapped the region at IOVAs
     * of its own choosing (vfio: user memory allocated with identity IOVAs gets a block of the container's IOVA space).
     */
    default long deviceAddress(DmaRegion region, long offset) {
        return region.iova(offset);
    }

    /** Undoes {@link #mapForDevice} after the MR is gone. */
    void unmapForDevice(DmaRegion region);

    /**
     * The IP addresses of the port's netdev, in GID table order: the driver programs them as RoCEv2 GIDs
     * (SET_ROCE_ADDRESS), as the kernel's mlx5_ib does from the netdev's addresses.
     */
    List<InetAddress> portAddresses();

    /**
     * The async EQ's interrupt, or null when the function has none (then the driver polls the EQ): the vfio backend's
     * MSI-X vector 0 on an eventfd when VFIO offers it.
     */
    default InterruptLine eqInterrupt() {
        return null;
    }

    /** Releases BAR0 and the function (stops a model's firmware). */
    @Override
    void close();
}
