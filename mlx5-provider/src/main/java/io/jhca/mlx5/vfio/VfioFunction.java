package io.jhca.mlx5.vfio;

import java.net.InetAddress;
import java.util.List;

import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.spi.InterruptLine;
import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.pci.PciFunction;
import io.jhca.pci.PciSysfs;
import io.jhca.vfio.BarMapping;
import io.jhca.vfio.IrqInfo;
import io.jhca.vfio.Syscalls;
import io.jhca.vfio.VfioAbi;
import io.jhca.vfio.VfioContainer;
import io.jhca.vfio.VfioDevice;
import io.jhca.vfio.VfioInterrupt;
import io.jhca.vfio.VfioIova;

/**
 * A ConnectX function bound to vfio-pci, opened the way rdma-core's providers/mlx5/mlx5_vfio.c opens one: a Type1v2
 * container, the function's IOMMU group, the device fd, BAR0 (VFIO region 0) mmapped as the MMIO window, Memory Space
 * and Bus Master enabled. DMA memory is mapped into the container's IOMMU as it is allocated ({@link VfioIova}:
 * allocated IOVAs normally, IOVA = physical address in the test mode); user memory registered as an MR is mapped by
 * {@link #mapForDevice} at IOVAs of the container's choosing, whatever its own translation says.
 *
 * <p>Interrupts: when VFIO reports MSI-X with eventfd signalling, vector 0 (the async EQ's, as in mlx5_vfio) is
 * wired to an eventfd, which is the EQ's {@link #eqInterrupt()}: the driver's event thread arms the EQ and sleeps on
 * it, and on a second eventfd that ends the sleep early (the driver's stop, a page request met by another thread).
 * Otherwise the function runs in polling mode and the event thread polls the EQ. {@link #eventMode()} says which.
 *
 * <p>{@link #close} gives everything back: the interrupt and the line's wake eventfd, BAR0, every DMA mapping (the
 * container unmaps what is left), the device, group and container fds. The driver tears the HCA down (TEARDOWN_HCA,
 * pages reclaimed) before.
 */
public final class VfioFunction implements Mlx5Function {

    /** The two ways the async EQ's events can reach the driver. */
    public enum EventMode { MSIX_VECTOR_0, POLLING }

    /** Smallest BAR0 the driver can use: the initialization segment (KH struct mlx5_init_seg) and one UAR page. */
    static final long MIN_BAR0 = 2 * 4096;

    private final String name;
    private final PciFunction pci;
    private final VfioContainer container;
    private final BarMapping bar;
    private final VfioIova dma;
    private final VfioInterrupt interrupt;
    /** The async EQ's line on {@link #interrupt}, null in polling mode. */
    private final EqInterruptLine line;
    private final EventMode eventMode;
    private final List<InetAddress> ports;
    private final UserMappings userMappings;
    private boolean closed;
    private int mappingsAtClose = -1;

    private VfioFunction(String name, PciFunction pci, VfioContainer container, BarMapping bar,
                         VfioIova dma, VfioInterrupt interrupt, List<InetAddress> ports) {
        this.name = name;
        this.pci = pci;
        this.container = container;
        this.bar = bar;
        this.dma = dma;
        this.interrupt = interrupt;
        this.eventMode = interrupt != null ? EventMode.MSIX_VECTOR_0 : EventMode.POLLING;
        this.ports = ports;
        this.userMappings = new UserMappings(name, new UserMappings.Iommu() {
            @Override
            public void map(long start, long length) {
                dma.map(start, length);
            }

            @Override
            public void unmap(long start, long length) {
                dma.unmap(start, length);
            }

            @Override
            public boolean translates(long address) {
                return VfioFunction.this.translates(address);
            }
        });
        this.line = interrupt != null ? new EqInterruptLine(interrupt) : null; // last: nothing after it fails and leaks its wake eventfd
    }

    /**
     * Opens {@code pci} (bound to vfio-pci) as an mlx5 function: BAR {@code barIndex} is BAR0 (0 except in the test
     * mode), DMA through {@code physicalIova ? IOVA = physical address : allocated IOVAs}.
     */
    static VfioFunction open(String name, PciFunction pci, PciSysfs sysfs, int barIndex, boolean physicalIova,
                             List<InetAddress> ports) {
        VfioContainer container = VfioContainer.open(Syscalls.linux(), sysfs.devRoot(), false);
        try {
            VfioDevice device = container.openDevice(pci);
            long size = device.regionInfo(barIndex).size();
            if (size < MIN_BAR0) {
                throw new IllegalStateException(name + " (" + pci.address() + "): BAR" + barIndex + " has 0x"
                        + Long.toHexString(size) + " bytes, fewer than the initialization segment and a UAR page need");
            }
            BarMapping bar = device.mapBar(barIndex);
            device.enableBusMaster();
            VfioIova dma = physicalIova ? container.physicalDma() : container.dma();
            VfioInterrupt irq = wireVector0(device);
            VfioFunction f = new VfioFunction(name, pci, container, bar, dma, irq, ports);
            System.err.println("jhca mlx5 " + f + ": events by " + (irq != null ? f.line.describe()
                    : "polling (no MSI-X with eventfd reported by VFIO)"));
            return f;
        } catch (RuntimeException | Error e) {
            try {
                container.close();
            } catch (RuntimeException closeFailure) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
    }

    /** MSI-X vector 0 on an eventfd when VFIO offers it (mlx5_vfio requires it; here polling is the fallback). */
    private static VfioInterrupt wireVector0(VfioDevice device) {
        if (device.info().numIrqs() <= VfioAbi.VFIO_PCI_MSIX_IRQ_INDEX) {
            return null;
        }
        IrqInfo msix = device.irqInfo(VfioAbi.VFIO_PCI_MSIX_IRQ_INDEX);
        if (!msix.eventfd() || msix.count() == 0) {
            return null;
        }
        return device.enableInterrupt(VfioAbi.VFIO_PCI_MSIX_IRQ_INDEX, 0);
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public String location() {
        return pci.address().toString();
    }

    @Override
    public int pciDeviceId() {
        return pci.device();
    }

    /** How the async EQ's events reach the driver: an MSI-X vector on an eventfd, or polling only. */
    public EventMode eventMode() {
        return eventMode;
    }

    /** MSI-X vector 0's eventfd as the async EQ's interrupt line, which can be woken early; null in polling mode. */
    @Override
    public InterruptLine eqInterrupt() {
        return line;
    }

    /**
     * Awaits on {@link #eqInterrupt()} that its wake eventfd ended ({@link InterruptLine#wakeUp}: the driver's stop, a
     * page request met by another thread), or that drained a wake-up left before them; 0 in polling mode.
     */
    public long eqWakeUps() {
        return line != null ? line.wakeUps() : 0;
    }

    /** The IOVA policy of the function's DMA: allocated, or physical (test mode). */
    public VfioIova.Policy iovaPolicy() {
        return dma.policy();
    }

    @Override
    public MmioWindow bar0() {
        return bar.window();
    }

    @Override
    public synchronized DmaRegion allocateDma(long bytes) {
        checkOpen();
        return DmaMemory.allocate(DmaOptions.of(bytes).iovaTranslator(dma));
    }

    /**
     * Maps the pages under {@code region} into the IOMMU unless they are mapped already: a region from
     * {@link #allocateDma} (its own translator is this function's), or pages inside a region mapped before (counted,
     * not mapped twice).
     */
    @Override
    public synchronized void mapForDevice(DmaRegion region) {
        checkOpen();
        userMappings.map(region.address(), region.length());
    }

    @Override
    public synchronized void unmapForDevice(DmaRegion region) {
        if (!closed) { // a closed function's container has unmapped everything
            userMappings.unmap(region.address(), region.length());
        }
    }

    /** The container's IOVA of a byte of a region this function allocated or mapped. */
    @Override
    public synchronized long deviceAddress(DmaRegion region, long offset) {
        checkOpen();
        if (offset < 0 || offset >= Math.max(region.length(), 1)) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside a region of " + region.length() + " bytes");
        }
        return dma.toIova(region.address() + offset);
    }

    private boolean translates(long va) {
        try {
            dma.toIova(va);
            return true;
        } catch (IllegalArgumentException notMapped) {
            return false;
        }
    }

    @Override
    public List<InetAddress> portAddresses() {
        return ports;
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("function " + name + " (" + pci.address() + ") is closed");
        }
    }

    /**
     * Unwires the interrupt and closes the line's wake eventfd, unmaps BAR0 and user memory, closes device, group and
     * container (the container unmaps any DMA mapping still in place). Every step runs even when one fails; the first
     * failure is thrown.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        failure = step(failure, userMappings::unmapAll);
        mappingsAtClose = dma.mappingCount();
        if (interrupt != null) {
            failure = step(failure, interrupt::close);
            failure = step(failure, line::close);
        }
        failure = step(failure, bar::close);
        failure = step(failure, container::close);
        if (failure != null) {
            throw failure;
        }
    }

    /** True once {@link #close} has run. */
    public synchronized boolean isClosed() {
        return closed;
    }

    /**
     * DMA mappings of driver memory ({@link #allocateDma}) still in place when the function was closed, -1 before: the
     * driver frees every queue, page and mailbox before it closes the function, so anything here was leaked (the
     * container unmaps it anyway).
     */
    public synchronized int leakedMappingsAtClose() {
        return mappingsAtClose;
    }

    private static RuntimeException step(RuntimeException failure, Runnable r) {
        try {
            r.run();
        } catch (RuntimeException e) {
            if (failure == null) {
                return e;
            }
            failure.addSuppressed(e);
        }
        return failure;
    }

    @Override
    public String toString() {
        return name + " (" + pci.address() + " " + String.format("%04x:%04x", pci.vendor(), pci.device()) + ", "
                + dma.policy().name().toLowerCase() + " IOVAs, " + (eventMode == EventMode.MSIX_VECTOR_0 ? "MSI-X" : "polling")
                + ")";
    }
}
