package io.jhca.vfio;

import static io.jhca.vfio.VfioAbi.*;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * An open VFIO device (a PCI function bound to vfio-pci): its info, regions, BAR mappings, configuration space,
 * bus mastering, reset and interrupts. Opened through {@link VfioGroup#openDevice} or
 * {@link VfioContainer#openDevice}.
 *
 * <p>{@link #close()} unwires every interrupt, closes their eventfds, unmaps every BAR and closes the device fd;
 * afterwards every method throws {@link VfioException}. Control path; methods are synchronized.
 */
public final class VfioDevice extends VfioHandle {

    private final VfioGroup group;
    private DeviceInfo info;
    private final Map<Integer, RegionInfo> regions = new HashMap<>();
    private final List<BarMapping> bars = new ArrayList<>();
    private final Map<Integer, List<VfioInterrupt>> irqs = new HashMap<>();

    private VfioDevice(final VfioGroup group, final Syscalls sys, final String name, final int fd) {
        super(sys, name, fd, "device");
        this.group = group;
    }

    /** Takes ownership of {@code fd}: on failure it is closed before the exception leaves. */
    static VfioDevice open(final VfioGroup group, final Syscalls sys, final String name, final int fd) {
        final VfioDevice d = new VfioDevice(group, sys, name, fd);
        try {
            d.info = d.readInfo();
            return d;
        } catch (final RuntimeException | Error e) {
            final RuntimeException closeFailure = d.closeFd(null);
            if (closeFailure != null) {
                e.addSuppressed(closeFailure);
            }
            throw e;
        }
    }

    private DeviceInfo readInfo() {
        final NativeStruct s = NativeStruct.withArgsz(DEVICE_INFO_SIZE);
        if (sys.ioctl(fd, VFIO_DEVICE_GET_INFO, s.address()) < 0) {
            throw new VfioException(name, "VFIO_DEVICE_GET_INFO", sys.errno(), null);
        }
        s.keepAlive();
        return new DeviceInfo(s.buffer.getInt(DEVICE_INFO_FLAGS), s.buffer.getInt(DEVICE_INFO_NUM_REGIONS),
            s.buffer.getInt(DEVICE_INFO_NUM_IRQS));
    }

    /** The PCI address, as the kernel names the device ("0000:00:03.0"). */
    public String name() {
        return name;
    }

    /** The device fd (for calls this library does not wrap). */
    public synchronized int fd() {
        ensureOpen("fd");
        return fd;
    }

    /** The group the device was opened through. */
    public VfioGroup group() {
        return group;
    }

    /** VFIO_DEVICE_GET_INFO, read at open. */
    public synchronized DeviceInfo info() {
        ensureOpen("VFIO_DEVICE_GET_INFO");
        return info;
    }

    /** VFIO_DEVICE_GET_REGION_INFO of region {@code index}, with its capability chain. */
    public synchronized RegionInfo regionInfo(final int index) {
        ensureOpen("VFIO_DEVICE_GET_REGION_INFO");
        if (index < 0 || index >= info.numRegions()) {
            throw new IllegalArgumentException(name + ": region index " + index + " outside 0.." + (info.numRegions() - 1));
        }
        NativeStruct s = regionQuery(index, REGION_INFO_SIZE);
        final int argsz = s.buffer.getInt(0);
        if ((s.buffer.getInt(REGION_INFO_FLAGS) & VFIO_REGION_INFO_FLAG_CAPS) != 0 && argsz > REGION_INFO_SIZE) {
            if (argsz > 1 << 20) {
                throw VfioException.refused(name, "VFIO_DEVICE_GET_REGION_INFO", "kernel asks for " + argsz + " bytes");
            }
            s = regionQuery(index, argsz); // room for the capability chain
        }
        return parseRegionInfo(s.buffer, s.size(), name);
    }

    private NativeStruct regionQuery(final int index, final int size) {
        final NativeStruct s = NativeStruct.withArgsz(size);
        s.buffer.putInt(REGION_INFO_INDEX, index);
        if (sys.ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, s.address()) < 0) {
            throw new VfioException(name, "VFIO_DEVICE_GET_REGION_INFO(" + index + ")", sys.errno(), null);
        }
        s.keepAlive();
        return s;
    }

    /** Decodes a {@code struct vfio_region_info} of {@code size} valid bytes and its capability chain. */
    static RegionInfo parseRegionInfo(final org.agrona.DirectBuffer b, final int size, final String device) {
        final int flags = b.getInt(REGION_INFO_FLAGS);
        final List<Capability> caps = new ArrayList<>();
        final List<RegionInfo.SparseArea> areas = new ArrayList<>();
        if ((flags & VFIO_REGION_INFO_FLAG_CAPS) != 0 && size > REGION_INFO_SIZE) {
            caps.addAll(Capability.walk(b, b.getInt(REGION_INFO_CAP_OFFSET), size, device, "VFIO_DEVICE_GET_REGION_INFO"));
            for (final Capability c : caps) {
                if (c.id() == VFIO_REGION_INFO_CAP_SPARSE_MMAP) {
                    final int n = b.getInt(c.offset() + SPARSE_MMAP_NR_AREAS);
                    if (n < 0 || n > (size - c.offset() - SPARSE_MMAP_AREAS) / SPARSE_MMAP_AREA_SIZE) {
                        throw VfioException.refused(device, "VFIO_DEVICE_GET_REGION_INFO", n + " sparse areas do not fit");
                    }
                    for (int i = 0; i < n; i++) {
                        final int at = c.offset() + SPARSE_MMAP_AREAS + i * SPARSE_MMAP_AREA_SIZE;
                        areas.add(new RegionInfo.SparseArea(b.getLong(at), b.getLong(at + 8)));
                    }
                }
            }
        }
        return new RegionInfo(b.getInt(REGION_INFO_INDEX), flags, b.getLong(REGION_INFO_REGION_SIZE),
            b.getLong(REGION_INFO_OFFSET), caps, areas);
    }

    /**
     * mmaps all of BAR {@code index} (0-5) read/write, shared, at the offset the kernel gives for it.
     *
     * @throws VfioException when the region is empty, not mmappable (e.g. an I/O-port BAR), or larger than one
     *                       window can cover (2 GiB - 1)
     */
    public synchronized BarMapping mapBar(final int index) {
        ensureOpen("mmap BAR" + index);
        if (index < VFIO_PCI_BAR0_REGION_INDEX || index > VFIO_PCI_BAR5_REGION_INDEX) {
            throw new IllegalArgumentException(name + ": BAR index " + index + " outside 0..5");
        }
        final RegionInfo r = regionInfo(index);
        final String call = "mmap BAR" + index;
        if (r.size() == 0) {
            throw VfioException.refused(name, call, "the BAR is not implemented (size 0)");
        }
        if (!r.mappable()) {
            throw VfioException.refused(name, call, "the region cannot be mmapped (flags 0x" + Integer.toHexString(r.flags())
                + "; an I/O-port BAR, or smaller than a page and not page-aligned); use pread/pwrite on the device fd");
        }
        if (r.size() > Integer.MAX_VALUE) {
            throw VfioException.refused(name, call, "BAR of 0x" + Long.toHexString(r.size())
                + " bytes is larger than one MMIO window (2 GiB - 1)");
        }
        final int prot = (r.readable() ? PROT_READ : 0) | (r.writable() ? PROT_WRITE : 0);
        final long address = sys.mmap(r.size(), prot, MAP_SHARED, fd, r.offset());
        if (address == -1L) {
            throw new VfioException(name, call, sys.errno(), "size 0x" + Long.toHexString(r.size()) + " at offset 0x"
                + Long.toHexString(r.offset()));
        }
        final BarMapping bar;
        try {
            bar = new BarMapping(this, index, address, (int) r.size());
        } catch (final RuntimeException | Error e) {
            sys.munmap(address, r.size());
            throw e;
        }
        bars.add(bar);
        return bar;
    }

    synchronized void unmapBar(final BarMapping bar) {
        if (bars.remove(bar)) {
            bar.release(sys);
        }
    }

    private RegionInfo cachedRegion(final int index) {
        RegionInfo r = regions.get(index);
        if (r == null) {
            r = regionInfo(index);
            regions.put(index, r); // a region's size and offset do not change while the device is open
        }
        return r;
    }

    /**
     * Reads {@code width} (1, 2, 4 or 8) bytes at {@code offset} of region {@code index} through the device fd
     * (pread), little-endian as PCI is: for regions that cannot be mmapped (I/O-port BARs, a BAR smaller than a
     * page) and for configuration space.
     */
    public synchronized long readRegion(final int index, final long offset, final int width) {
        ensureOpen("pread region " + index);
        final RegionInfo r = cachedRegion(index);
        final String call = "pread " + regionName(index) + " 0x" + Long.toHexString(offset);
        checkAccess(r, offset, width, call);
        final NativeStruct s = new NativeStruct(8);
        final long n = sys.pread(fd, s.address(), width, r.offset() + offset);
        s.keepAlive();
        if (n != width) {
            throw new VfioException(name, call, n < 0 ? sys.errno() : Errno.EIO, n >= 0 ? "short read of " + n + " bytes" : null);
        }
        final long v = s.buffer.getLong(0, java.nio.ByteOrder.LITTLE_ENDIAN);
        return width == 8 ? v : v & ((1L << (8 * width)) - 1);
    }

    /** Writes {@code width} (1, 2, 4 or 8) bytes at {@code offset} of region {@code index} through the device fd (pwrite). */
    public synchronized void writeRegion(final int index, final long offset, final int width, final long value) {
        ensureOpen("pwrite region " + index);
        final RegionInfo r = cachedRegion(index);
        final String call = "pwrite " + regionName(index) + " 0x" + Long.toHexString(offset);
        checkAccess(r, offset, width, call);
        final NativeStruct s = new NativeStruct(8);
        s.buffer.putLong(0, value, java.nio.ByteOrder.LITTLE_ENDIAN);
        final long n = sys.pwrite(fd, s.address(), width, r.offset() + offset);
        s.keepAlive();
        if (n != width) {
            throw new VfioException(name, call, n < 0 ? sys.errno() : Errno.EIO, n >= 0 ? "short write of " + n + " bytes" : null);
        }
    }

    /** Reads {@code width} (1, 2 or 4) bytes of configuration space at {@code offset}. */
    public int readConfig(final int offset, final int width) {
        checkConfigWidth(width);
        return (int) readRegion(VFIO_PCI_CONFIG_REGION_INDEX, offset, width);
    }

    /** Writes {@code width} (1, 2 or 4) bytes of configuration space at {@code offset}. */
    public void writeConfig(final int offset, final int width, final int value) {
        checkConfigWidth(width);
        writeRegion(VFIO_PCI_CONFIG_REGION_INDEX, offset, width, value);
    }

    private void checkConfigWidth(final int width) {
        if (width != 1 && width != 2 && width != 4) {
            throw new IllegalArgumentException(name + ": config access width " + width + " (1, 2 or 4)");
        }
    }

    private void checkAccess(final RegionInfo r, final long offset, final int width, final String call) {
        if (width != 1 && width != 2 && width != 4 && width != 8) {
            throw new IllegalArgumentException(name + ": " + call + ": access width " + width + " (1, 2, 4 or 8)");
        }
        if (offset < 0 || offset > r.size() - width || (offset & (width - 1)) != 0) {
            throw new IndexOutOfBoundsException(name + ": " + call + " of " + width + " bytes is outside (or misaligned"
                + " in) the region's 0x" + Long.toHexString(r.size()) + " bytes");
        }
        if (!(call.startsWith("pread") ? r.readable() : r.writable())) {
            throw VfioException.refused(name, call, "the region is not " + (call.startsWith("pread") ? "readable" : "writable"));
        }
    }

    static String regionName(final int index) {
        if (index >= VFIO_PCI_BAR0_REGION_INDEX && index <= VFIO_PCI_BAR5_REGION_INDEX) {
            return "BAR" + index;
        }
        switch (index) {
            case VFIO_PCI_ROM_REGION_INDEX: return "ROM";
            case VFIO_PCI_CONFIG_REGION_INDEX: return "config";
            case 8: return "VGA";
            default: return "region " + index;
        }
    }

    /**
     * Sets Memory Space and Bus Master in the command register (read-modify-write; rdma-core writes 0x6 blindly),
     * so the device may decode its BARs and start DMA.
     */
    public synchronized void enableBusMaster() {
        final int cmd = readConfig(PCI_COMMAND, 2);
        writeConfig(PCI_COMMAND, 2, cmd | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
    }

    /** Whether Bus Master is set in the command register. */
    public synchronized boolean busMaster() {
        return (readConfig(PCI_COMMAND, 2) & PCI_COMMAND_MASTER) != 0;
    }

    /** VFIO_DEVICE_RESET; refused when the device reports no reset method. */
    public synchronized void reset() {
        ensureOpen("VFIO_DEVICE_RESET");
        if (!info.resetSupported()) {
            throw VfioException.refused(name, "VFIO_DEVICE_RESET", "the device supports no reset (no FLR, PM or bus reset)");
        }
        if (sys.ioctl(fd, VFIO_DEVICE_RESET, 0) < 0) {
            throw new VfioException(name, "VFIO_DEVICE_RESET", sys.errno(), null);
        }
    }

    /** VFIO_DEVICE_GET_IRQ_INFO of IRQ index {@code index} (INTx 0, MSI 1, MSI-X 2, ...). */
    public synchronized IrqInfo irqInfo(final int index) {
        ensureOpen("VFIO_DEVICE_GET_IRQ_INFO");
        if (index < 0 || index >= info.numIrqs()) {
            throw new IllegalArgumentException(name + ": IRQ index " + index + " outside 0.." + (info.numIrqs() - 1));
        }
        final NativeStruct s = NativeStruct.withArgsz(IRQ_INFO_SIZE);
        s.buffer.putInt(IRQ_INFO_INDEX, index);
        if (sys.ioctl(fd, VFIO_DEVICE_GET_IRQ_INFO, s.address()) < 0) {
            throw new VfioException(name, "VFIO_DEVICE_GET_IRQ_INFO(" + index + ")", sys.errno(), null);
        }
        s.keepAlive();
        return new IrqInfo(s.buffer.getInt(IRQ_INFO_INDEX), s.buffer.getInt(IRQ_INFO_FLAGS), s.buffer.getInt(IRQ_INFO_COUNT));
    }

    /**
     * Wires vector {@code vector} of IRQ index {@code index} (MSI 1, MSI-X 2) to a new eventfd. The first vector
     * of an index is wired with one SET_IRQS covering all its vectors, the others -1, as rdma-core's mlx5_vfio
     * does (MSI and MSI-X are enabled once with their vector count); later vectors one SET_IRQS each.
     */
    public synchronized VfioInterrupt enableInterrupt(final int index, final int vector) {
        final IrqInfo irq = irqInfo(index);
        final String call = "VFIO_DEVICE_SET_IRQS(index " + index + ", vector " + vector + ")";
        if (!irq.eventfd()) {
            throw VfioException.refused(name, call, "the IRQ index does not signal eventfds");
        }
        if (vector < 0 || vector >= irq.count()) {
            throw VfioException.refused(name, call, "the index has " + irq.count() + " vector(s)"
                + (irq.count() == 0 ? " (the device lacks this capability)" : ""));
        }
        final List<VfioInterrupt> wired = irqs.getOrDefault(index, List.of());
        for (final VfioInterrupt w : wired) {
            if (w.vector() == vector) {
                throw VfioException.refused(name, call, "the vector is already wired");
            }
        }
        final VfioInterrupt interrupt = new VfioInterrupt(this, sys, index, vector);
        try {
            if (wired.isEmpty()) {
                final int[] fds = new int[irq.count()];
                java.util.Arrays.fill(fds, -1);
                fds[vector] = interrupt.fd();
                setIrqs(index, 0, fds, call);
            } else {
                setIrqs(index, vector, new int[] {interrupt.fd()}, call);
            }
        } catch (final RuntimeException | Error e) {
            Cleanup.run(null, interrupt::closeFd);
            throw e;
        }
        irqs.computeIfAbsent(index, k -> new ArrayList<>()).add(interrupt);
        return interrupt;
    }

    private void setIrqs(final int index, final int start, final int[] fds, final String call) {
        final NativeStruct s = NativeStruct.withArgsz(IRQ_SET_SIZE + 4 * fds.length);
        s.buffer.putInt(IRQ_SET_FLAGS, VFIO_IRQ_SET_DATA_EVENTFD | VFIO_IRQ_SET_ACTION_TRIGGER);
        s.buffer.putInt(IRQ_SET_INDEX, index);
        s.buffer.putInt(IRQ_SET_START, start);
        s.buffer.putInt(IRQ_SET_COUNT, fds.length);
        for (int i = 0; i < fds.length; i++) {
            s.buffer.putInt(IRQ_SET_DATA + 4 * i, fds[i]);
        }
        if (sys.ioctl(fd, VFIO_DEVICE_SET_IRQS, s.address()) < 0) {
            throw new VfioException(name, call, sys.errno(), null);
        }
        s.keepAlive();
    }

    /**
     * Unmasks INTx after it fired: vfio-pci masks a level-triggered INTx when it signals the eventfd
     * (VFIO_IRQ_INFO_AUTOMASKED), so the handler unmasks it once the device's interrupt is acknowledged.
     */
    public synchronized void unmaskIntx() {
        ensureOpen("VFIO_DEVICE_SET_IRQS");
        final NativeStruct s = NativeStruct.withArgsz(IRQ_SET_SIZE);
        s.buffer.putInt(IRQ_SET_FLAGS, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_UNMASK);
        s.buffer.putInt(IRQ_SET_INDEX, VFIO_PCI_INTX_IRQ_INDEX);
        s.buffer.putInt(IRQ_SET_COUNT, 1);
        if (sys.ioctl(fd, VFIO_DEVICE_SET_IRQS, s.address()) < 0) {
            throw new VfioException(name, "VFIO_DEVICE_SET_IRQS(INTx unmask)", sys.errno(), null);
        }
        s.keepAlive();
    }

    /** Turns IRQ index {@code index} off (DATA_NONE, count 0) and closes its eventfds. */
    public synchronized void disableInterrupts(final int index) {
        ensureOpen("VFIO_DEVICE_SET_IRQS");
        final List<VfioInterrupt> wired = irqs.remove(index);
        RuntimeException failure = Cleanup.run(null, () -> disableIndex(index));
        if (wired != null) {
            for (final VfioInterrupt w : wired) {
                failure = Cleanup.run(failure, w::closeFd);
            }
        }
        if (failure != null) {
            throw failure;
        }
    }

    private void disableIndex(final int index) {
        final NativeStruct s = NativeStruct.withArgsz(IRQ_SET_SIZE);
        s.buffer.putInt(IRQ_SET_FLAGS, VFIO_IRQ_SET_DATA_NONE | VFIO_IRQ_SET_ACTION_TRIGGER);
        s.buffer.putInt(IRQ_SET_INDEX, index);
        if (sys.ioctl(fd, VFIO_DEVICE_SET_IRQS, s.address()) < 0) {
            throw new VfioException(name, "VFIO_DEVICE_SET_IRQS(index " + index + ", off)", sys.errno(), null);
        }
        s.keepAlive();
    }

    /** Unwires one vector (its fd set to -1; the whole index off when it was the last) and closes its eventfd. */
    synchronized void disableInterrupt(final VfioInterrupt interrupt) {
        final List<VfioInterrupt> wired = irqs.get(interrupt.index());
        if (closed || wired == null || !wired.contains(interrupt)) {
            interrupt.closeFd();
            return;
        }
        if (wired.size() == 1) {
            disableInterrupts(interrupt.index());
            return;
        }
        wired.remove(interrupt);
        RuntimeException failure = Cleanup.run(null, () -> setIrqs(interrupt.index(), interrupt.vector(), new int[] {-1},
            "VFIO_DEVICE_SET_IRQS(index " + interrupt.index() + ", vector " + interrupt.vector() + ", off)"));
        failure = Cleanup.run(failure, interrupt::closeFd);
        if (failure != null) {
            throw failure;
        }
    }

    /**
     * Unwires every interrupt and closes its eventfd and unmaps every BAR; then (see {@link VfioHandle#close()})
     * the device fd is closed.
     */
    @Override
    RuntimeException releaseResources(RuntimeException failure) {
        for (final Integer index : new ArrayList<>(irqs.keySet())) {
            failure = Cleanup.run(failure, () -> disableInterrupts(index));
        }
        for (final BarMapping bar : new ArrayList<>(bars)) {
            failure = Cleanup.run(failure, () -> unmapBar(bar));
        }
        return failure;
    }

    @Override
    void afterClose(final RuntimeException failure) {
        group.deviceClosed(this);
    }

    @Override
    public String toString() {
        return "VfioDevice[" + name + (closed ? ", closed" : ", fd " + fd + ", " + info) + "]";
    }
}
