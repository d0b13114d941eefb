package io.jhca.connectx;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.List;

import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.spi.Mlx5Function;

/**
 * The driver's side of a ConnectX model running in another process ({@link ModelProcess}): an {@link Mlx5Function}
 * whose BAR0 is the same shared-memory file the model serves, mapped here, and whose DMA memory is carved from the
 * same RAM file with IOVA = guest-physical address ({@link GuestRam}). It is what a driver in a VM sees through
 * ivshmem and an IOMMU mapping IOVA = guest-physical, without the VM: a test and lab backend, found by nobody through
 * ServiceLoader (open it explicitly and hand it to {@code Mlx5Provider.open}).
 *
 * <p>Memory the device can reach is RAM-file memory only: {@link #mapForDevice} refuses any other region with a clear
 * error (the model process could not see it). Allocate user buffers with {@link GuestRam#allocate}.
 */
public final class ShmFunction implements Mlx5Function {

    private final String name;
    private final SharedMapping bar;
    private final MmioWindow bar0;
    private final GuestRam ram;
    private final List<InetAddress> ports;
    private boolean closed;

    /**
     * @param barFile the model's BAR0 file ({@code --bar} of the model process)
     * @param ram     the RAM file, mapped with the model's layout; not closed with the function
     * @param port    the model's port address ({@code --address})
     */
    public ShmFunction(String name, Path barFile, GuestRam ram, InetAddress port) {
        this.name = name;
        this.bar = SharedMapping.map(barFile, ModelProcess.BAR0_BYTES);
        this.bar0 = new MmioWindow(bar.address(), ModelProcess.BAR0_BYTES);
        this.ram = ram;
        this.ports = List.of(port);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String location() {
        return "shm:" + bar.file();
    }

    @Override
    public int pciDeviceId() {
        return ModelCaps.PCI_DEVICE_ID;
    }

    @Override
    public MmioWindow bar0() {
        return bar0;
    }

    /** Driver memory (command queue, pages, rings, doorbell records) from the low part of RAM: IOVA = file offset. */
    @Override
    public DmaRegion allocateDma(long bytes) {
        checkOpen();
        return ram.allocate(bytes, false);
    }

    @Override
    public void mapForDevice(DmaRegion region) {
        checkOpen();
        if (region.length() == 0) {
            return;
        }
        long off = region.address() - ram.address();
        if (!ram.containsHost(region.address(), region.length())
                || region.iova(0) != ram.iovaOf(off)
                || region.iova(region.length() - 1) != ram.iovaOf(off + region.length() - 1)) {
            throw new IllegalArgumentException(String.format("%s: memory at 0x%x (%d bytes) is not in the RAM file %s "
                    + "with IOVA = guest-physical address; the model process cannot reach it: allocate it with "
                    + "GuestRam.allocate", name, region.address(), region.length(), ram.file()));
        }
    }

    @Override
    public void unmapForDevice(DmaRegion region) {
        // nothing was mapped: the device reaches all of RAM
    }

    @Override
    public List<InetAddress> portAddresses() {
        return ports;
    }

    private synchronized void checkOpen() {
        if (closed) {
            throw new IllegalStateException("function " + name + " is closed");
        }
    }

    /** Unmaps BAR0 (the model keeps running; the RAM file stays mapped until its owner closes it). */
    @Override
    public synchronized void close() {
        if (!closed) {
            closed = true;
            bar.close();
        }
    }

    @Override
    public String toString() {
        return name + " (" + location() + ", " + ram + ")";
    }
}
