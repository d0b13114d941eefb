package io.jhca.vfio;

import static io.jhca.vfio.VfioAbi.*;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongUnaryOperator;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.memory.PagemapIova;
import io.jhca.pci.PciAddress;
import io.jhca.pci.PciFunction;

/**
 * A VFIO container ({@code /dev/vfio/vfio}): one IOMMU address space shared by the groups attached to it.
 * Opens the way rdma-core's mlx5_vfio does (API version 0, Type1v2 required), sets the IOMMU when the first
 * group joins, then seeds an {@link IovaAllocator} from the usable ranges and page sizes the IOMMU reports.
 *
 * <p>DMA: {@link #mapDma} and {@link #unmapDma} are the raw ioctls; {@link #dma()} (IOVAs from the allocator)
 * and {@link #physicalDma()} (IOVA = physical address) are {@link io.jhca.memory.IovaTranslator}s that map
 * {@link DmaMemory} regions as they are allocated. The container's mapping limit (type1's
 * {@code dma_entry_limit}, 65,535 by default) is checked before every map.
 *
 * <p>{@link #close()} closes every device and group opened through it, unmaps every DMA mapping, and closes the
 * container fd; anything used afterwards throws. Control path; methods are synchronized.
 */
public final class VfioContainer implements AutoCloseable {

    /** type1's default {@code dma_entry_limit} (drivers/vfio/vfio_iommu_type1.c), when DMA_AVAIL is not reported. */
    public static final int DEFAULT_MAPPING_LIMIT = 65535;
    static final String NAME = "container";

    private final Syscalls sys;
    private final Path devRoot;
    private final boolean allowNoIommu;
    private int fd;
    private IommuType iommuType;
    private IommuInfo info;
    private IovaAllocator allocator;
    private int mappingLimit = DEFAULT_MAPPING_LIMIT;
    private final TreeMap<Long, DmaMapping> mappings = new TreeMap<>(Long::compareUnsigned);
    private final Map<String, VfioGroup> groups = new LinkedHashMap<>();
    private VfioIova dma;
    private VfioIova physicalDma;
    private final List<VfioIova> otherTranslators = new ArrayList<>();
    private boolean closed;

    private VfioContainer(final Syscalls sys, final Path devRoot, final boolean allowNoIommu, final int fd) {
        this.sys = sys;
        this.devRoot = devRoot;
        this.allowNoIommu = allowNoIommu;
        this.fd = fd;
    }

    /** The container of this process's kernel, Type1v2 only. */
    public static VfioContainer open() {
        return open(Syscalls.linux(), Path.of("/dev"), false);
    }

    /**
     * A container over {@code sys} with device nodes under {@code devRoot} (normally /dev).
     *
     * @param allowNoIommu accept vfio's unsafe no-IOMMU mode when the kernel offers no Type1v2 IOMMU
     * @throws VfioException when /dev/vfio/vfio cannot be opened, the API version is not 0, or no usable IOMMU
     *                       model is offered (with what to do about it)
     */
    public static VfioContainer open(final Syscalls sys, final Path devRoot, final boolean allowNoIommu) {
        final String path = devRoot.resolve("vfio/vfio").toString();
        final int fd = sys.open(path, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            final int errno = sys.errno();
            throw new VfioException(NAME, "open " + path, errno, errno == Errno.ENOENT
                ? "the vfio module is not loaded (modprobe vfio-pci)"
                : errno == Errno.EACCES || errno == Errno.EPERM ? "run as root or give this user access to " + path : null);
        }
        final VfioContainer c = new VfioContainer(sys, devRoot, allowNoIommu, fd);
        try {
            c.checkApi();
            return c;
        } catch (final RuntimeException | Error e) {
            c.closeFd();
            throw e;
        }
    }

    private void checkApi() {
        final int version = sys.ioctl(fd, VFIO_GET_API_VERSION, 0);
        if (version < 0) {
            throw new VfioException(NAME, "VFIO_GET_API_VERSION", sys.errno(), null);
        }
        if (version != VFIO_API_VERSION) {
            throw VfioException.refused(NAME, "VFIO_GET_API_VERSION", "API version " + version + ", this library speaks "
                + VFIO_API_VERSION);
        }
        if (hasExtension(VFIO_TYPE1v2_IOMMU)) {
            iommuType = IommuType.TYPE1V2;
        } else if (allowNoIommu && hasExtension(VFIO_NOIOMMU_IOMMU)) {
            iommuType = IommuType.NOIOMMU;
        } else {
            throw VfioException.refused(NAME, "VFIO_CHECK_EXTENSION(VFIO_TYPE1v2_IOMMU)", "the kernel offers no Type1v2"
                + " IOMMU: enable VT-d / AMD-Vi in the firmware and boot with intel_iommu=on (or amd_iommu=on) iommu=pt"
                + (allowNoIommu ? ", or load vfio with enable_unsafe_noiommu_mode=1 (unsafe)" : "")
                + "; modprobe vfio_iommu_type1 if it is built as a module");
        }
    }

    /** VFIO_GET_API_VERSION (0 for every kernel since vfio began). */
    public synchronized int apiVersion() {
        ensureOpen("VFIO_GET_API_VERSION");
        final int v = sys.ioctl(fd, VFIO_GET_API_VERSION, 0);
        if (v < 0) {
            throw new VfioException(NAME, "VFIO_GET_API_VERSION", sys.errno(), null);
        }
        return v;
    }

    /** VFIO_CHECK_EXTENSION: whether the kernel supports {@code extension} (e.g. {@link VfioAbi#VFIO_TYPE1v2_IOMMU}). */
    public synchronized boolean hasExtension(final int extension) {
        ensureOpen("VFIO_CHECK_EXTENSION");
        final int r = sys.ioctl(fd, VFIO_CHECK_EXTENSION, extension);
        if (r < 0) {
            throw new VfioException(NAME, "VFIO_CHECK_EXTENSION(" + extension + ")", sys.errno(), null);
        }
        return r > 0;
    }

    /** The IOMMU model this container uses (set on the kernel when the first group joins). */
    public IommuType iommuType() {
        return iommuType;
    }

    /** The container fd (for ioctls this library does not wrap). */
    public synchronized int fd() {
        ensureOpen("fd");
        return fd;
    }

    /**
     * Opens {@code /dev/vfio/<group>} (or {@code noiommu-<group>} in no-IOMMU mode), checks it is viable and
     * attaches it to this container; the first group also sets the IOMMU and reads its info. Opening a group
     * already open here returns the same group.
     */
    public synchronized VfioGroup openGroup(final int group) {
        ensureOpen("open group");
        if (group < 0) {
            throw new IllegalArgumentException("IOMMU group number " + group);
        }
        final String name = (iommuType == IommuType.NOIOMMU ? "noiommu-" : "") + group;
        final VfioGroup existing = groups.get(name);
        if (existing != null && !existing.isClosed()) {
            return existing;
        }
        final VfioGroup g = VfioGroup.open(this, sys, devRoot.resolve("vfio").resolve(name), "group " + name);
        groups.put(name, g);
        return g;
    }

    /**
     * Opens {@code function}'s group (see {@link #openGroup(int)}) and the device in it. Read the function after
     * binding it: in no-IOMMU mode its group only appears when vfio-pci binds it.
     */
    public VfioDevice openDevice(final PciFunction function) {
        if (function.iommuGroup() < 0) {
            throw VfioException.refused(function.address().toString(), "open device", "the function has no IOMMU group:"
                + " the kernel has no IOMMU enabled (boot with intel_iommu=on or amd_iommu=on)");
        }
        return openGroup(function.iommuGroup()).openDevice(function.address());
    }

    /** Opens the device {@code address} in IOMMU group {@code group}. */
    public VfioDevice openDevice(final PciAddress address, final int group) {
        return openGroup(group).openDevice(address);
    }

    /** Called by a group once its SET_CONTAINER succeeded; the first one sets the IOMMU. */
    synchronized void attached(final VfioGroup group) {
        if (info != null) {
            return; // the IOMMU is set once, by the first group
        }
        if (sys.ioctl(fd, VFIO_SET_IOMMU, iommuType.value()) < 0) {
            throw new VfioException(NAME, "VFIO_SET_IOMMU(" + iommuType + ")", sys.errno(), iommuType == IommuType.TYPE1V2
                ? "if the IOMMU does no interrupt remapping, load vfio_iommu_type1 with allow_unsafe_interrupts=1" : null);
        }
        if (iommuType == IommuType.NOIOMMU) {
            info = new IommuInfo(0, List.of(), false, -1); // no IOMMU, nothing to ask (every other ioctl is ENOTTY)
            return;
        }
        info = readIommuInfo();
        allocator = new IovaAllocator(info.ranges(), info.minPageSize());
        if (info.dmaAvailable() >= 0) {
            mappingLimit = info.dmaAvailable();
        }
    }

    private IommuInfo readIommuInfo() {
        NativeStruct s = NativeStruct.withArgsz(IOMMU_INFO_SIZE);
        if (sys.ioctl(fd, VFIO_IOMMU_GET_INFO, s.address()) < 0) {
            throw new VfioException(NAME, "VFIO_IOMMU_GET_INFO", sys.errno(), null);
        }
        final int argsz = s.buffer.getInt(0);
        if ((s.buffer.getInt(IOMMU_INFO_FLAGS) & VFIO_IOMMU_INFO_CAPS) != 0 && argsz > IOMMU_INFO_SIZE) {
            if (argsz > 1 << 20) {
                throw VfioException.refused(NAME, "VFIO_IOMMU_GET_INFO", "kernel asks for " + argsz + " bytes of info");
            }
            s = NativeStruct.withArgsz(argsz); // the capability chain needs a larger buffer: ask again
            if (sys.ioctl(fd, VFIO_IOMMU_GET_INFO, s.address()) < 0) {
                throw new VfioException(NAME, "VFIO_IOMMU_GET_INFO", sys.errno(), null);
            }
        }
        s.keepAlive();
        return parseIommuInfo(s.buffer, s.size());
    }

    /** Decodes a {@code struct vfio_iommu_type1_info} and its capabilities. */
    static IommuInfo parseIommuInfo(final org.agrona.DirectBuffer b, final int size) {
        final int flags = b.getInt(IOMMU_INFO_FLAGS);
        final long pageSizes = (flags & VFIO_IOMMU_INFO_PGSIZES) != 0 ? b.getLong(IOMMU_INFO_PGSIZES) : 0;
        final List<IovaRange> ranges = new ArrayList<>();
        int avail = -1;
        if ((flags & VFIO_IOMMU_INFO_CAPS) != 0 && size > IOMMU_INFO_SIZE) {
            for (final Capability cap : Capability.walk(b, b.getInt(IOMMU_INFO_CAP_OFFSET), size, NAME, "VFIO_IOMMU_GET_INFO")) {
                if (cap.id() == VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE) {
                    final int n = b.getInt(cap.offset() + IOVA_RANGE_NR_IOVAS);
                    if (n < 0 || n > (size - cap.offset() - IOVA_RANGE_RANGES) / IOVA_RANGE_SIZE) {
                        throw VfioException.refused(NAME, "VFIO_IOMMU_GET_INFO", n + " IOVA ranges do not fit the info");
                    }
                    for (int i = 0; i < n; i++) {
                        final int at = cap.offset() + IOVA_RANGE_RANGES + i * IOVA_RANGE_SIZE;
                        ranges.add(new IovaRange(b.getLong(at), b.getLong(at + 8)));
                    }
                } else if (cap.id() == VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL && cap.offset() + DMA_AVAIL_AVAIL + 4 <= size) {
                    avail = b.getInt(cap.offset() + DMA_AVAIL_AVAIL);
                }
            }
        }
        final boolean reported = !ranges.isEmpty();
        return new IommuInfo(pageSizes, reported ? ranges : IommuInfo.LEGACY_RANGES, reported, avail);
    }

    /** What the IOMMU reported when the first group joined. */
    public synchronized IommuInfo iommuInfo() {
        ensureOpen("VFIO_IOMMU_GET_INFO");
        ensureIommu("VFIO_IOMMU_GET_INFO");
        return info;
    }

    /**
     * The IOVA allocator seeded from {@link #iommuInfo()} (Type1v2 only), for inspection; the mapDma methods take
     * and return its blocks themselves.
     */
    public synchronized IovaAllocator allocator() {
        ensureOpen("IOVA allocation");
        ensureMappable("IOVA allocation");
        return allocator;
    }

    /** Mappings this container accepts in all. */
    public synchronized int mappingLimit() {
        return mappingLimit;
    }

    /** The DMA mappings now in place, by IOVA. */
    public synchronized List<DmaMapping> mappings() {
        return List.copyOf(mappings.values());
    }

    /**
     * VFIO_IOMMU_MAP_DMA at an IOVA of the caller's choosing: lets the devices of this container read and write
     * {@code size} bytes at {@code vaddr} through {@code iova}. The block is taken from the {@link #allocator()}
     * first, so it can never collide with IOVAs handed out there (a block outside the usable ranges or already
     * in use is refused). The memory must stay mapped (and should be locked) until {@link #unmapDma}.
     */
    public synchronized DmaMapping mapDma(final long vaddr, final long iova, final long size) {
        ensureOpen("VFIO_IOMMU_MAP_DMA");
        ensureMappable("VFIO_IOMMU_MAP_DMA");
        checkRoom(1);
        allocator.reserve(iova, size);
        try {
            return mapReserved(vaddr, iova, size);
        } catch (final RuntimeException | Error e) {
            allocator.free(iova, size);
            throw e;
        }
    }

    /**
     * VFIO_IOMMU_MAP_DMA of {@code size} bytes at {@code vaddr} at an IOVA from the {@link #allocator()}, aligned
     * to the size up to 2 MiB (so the IOMMU can use large pages).
     */
    public DmaMapping mapDma(final long vaddr, final long size) {
        if (size <= 0) {
            throw new IllegalArgumentException("DMA mapping size " + size);
        }
        return mapDmaAligned(vaddr, size, Math.min(2L << 20, Long.highestOneBit(size)));
    }

    /**
     * VFIO_IOMMU_MAP_DMA at an IOVA from the {@link #allocator()} aligned to {@code alignment} (a power of two),
     * e.g. the size-aligned ranges rdma-core's mlx5_vfio gives the command queue and each EQ. (A block taken from
     * the allocator by hand is already in use: pass it to no mapDma; let these methods take the block.)
     */
    public synchronized DmaMapping mapDmaAligned(final long vaddr, final long size, final long alignment) {
        ensureOpen("VFIO_IOMMU_MAP_DMA");
        ensureMappable("VFIO_IOMMU_MAP_DMA");
        checkRoom(1);
        final long iova = allocator.allocate(size, alignment);
        try {
            return mapReserved(vaddr, iova, size);
        } catch (final RuntimeException | Error e) {
            allocator.free(iova, size);
            throw e;
        }
    }

    /** The ioctl itself, for a block already taken from the allocator. */
    private DmaMapping mapReserved(final long vaddr, final long iova, final long size) {
        checkRoom(1);
        final NativeStruct s = NativeStruct.withArgsz(DMA_MAP_SIZE);
        s.buffer.putInt(DMA_MAP_FLAGS, VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE);
        s.buffer.putLong(DMA_MAP_VADDR, vaddr);
        s.buffer.putLong(DMA_MAP_IOVA, iova);
        s.buffer.putLong(DMA_MAP_MAP_SIZE, size);
        if (sys.ioctl(fd, VFIO_IOMMU_MAP_DMA, s.address()) < 0) {
            final int errno = sys.errno();
            throw new VfioException(NAME, "VFIO_IOMMU_MAP_DMA", errno, "va 0x" + Long.toHexString(vaddr) + ", iova 0x"
                + Long.toHexString(iova) + ", size 0x" + Long.toHexString(size)
                + (errno == Errno.ENOMEM ? " (locked memory limit? see ulimit -l)" : "")
                + (errno == Errno.ENOSPC ? " (the container's mapping limit)" : ""));
        }
        s.keepAlive();
        final DmaMapping m = new DmaMapping(vaddr, iova, size);
        mappings.put(iova, m);
        return m;
    }

    /** VFIO_IOMMU_UNMAP_DMA of a mapping made by {@link #mapDma}; its IOVA block goes back to the allocator. */
    public synchronized void unmapDma(final DmaMapping mapping) {
        ensureOpen("VFIO_IOMMU_UNMAP_DMA");
        if (!mapping.equals(mappings.get(mapping.iova()))) {
            throw new IllegalArgumentException("not a mapping of this container: " + mapping);
        }
        unmapRaw(mapping);
    }

    private void unmapRaw(final DmaMapping m) {
        final NativeStruct s = NativeStruct.withArgsz(DMA_UNMAP_SIZE);
        s.buffer.putLong(DMA_UNMAP_IOVA, m.iova());
        s.buffer.putLong(DMA_UNMAP_UNMAP_SIZE, m.size());
        final int r = sys.ioctl(fd, VFIO_IOMMU_UNMAP_DMA, s.address());
        s.keepAlive();
        if (r < 0) {
            throw new VfioException(NAME, "VFIO_IOMMU_UNMAP_DMA", sys.errno(), m.toString());
        }
        mappings.remove(m.iova());
        allocator.free(m.iova(), m.size());
        // The kernel writes back how much it unmapped; less means part of the range was never mapped.
        final long unmapped = s.buffer.getLong(DMA_UNMAP_UNMAP_SIZE);
        if (unmapped != m.size()) {
            throw VfioException.refused(NAME, "VFIO_IOMMU_UNMAP_DMA", "unmapped 0x" + Long.toHexString(unmapped)
                + " bytes of " + m);
        }
    }

    /** Throws unless {@code more} mappings fit under the limit. */
    synchronized void checkRoom(final int more) {
        if (mappings.size() + (long) more > mappingLimit) {
            throw VfioException.refused(NAME, "VFIO_IOMMU_MAP_DMA", "the container's mapping limit of " + mappingLimit
                + " would be exceeded (" + mappings.size() + " in place, " + more + " more asked for; vfio_iommu_type1"
                + " dma_entry_limit): map fewer, larger regions, e.g. 2 MiB huge pages");
        }
    }

    /**
     * The IOVA policy "allocated": each region {@link DmaMemory} maps through it gets a block from the allocator
     * (aligned to its size up to 2 MiB, so the IOMMU can use large pages) and one MAP_DMA.
     */
    public synchronized VfioIova dma() {
        ensureOpen("dma");
        ensureMappable("dma");
        if (dma == null) {
            dma = new VfioIova(this, VfioIova.Policy.ALLOCATED, null);
        }
        return dma;
    }

    /**
     * The IOVA policy "physical": IOVA = the physical address of each page, from /proc/self/pagemap (needs root),
     * mapped with MAP_DMA at that IOVA in IOVA-contiguous runs (one per 2 MiB huge page, or per run of
     * physically contiguous small pages). For a device model outside a VM that follows guest-physical addresses.
     * In no-IOMMU mode nothing is mapped and the IOVA is simply the physical address.
     */
    public synchronized VfioIova physicalDma() {
        ensureOpen("dma");
        ensureIommu("dma");
        if (physicalDma == null) {
            final PagemapIova pagemap = new PagemapIova();
            physicalDma = new VfioIova(this, VfioIova.Policy.PHYSICAL, pagemap::toIova);
        }
        return physicalDma;
    }

    /** The "physical" policy with physical addresses from {@code physicalAddress} (tests, or another source). */
    public synchronized VfioIova physicalDma(final LongUnaryOperator physicalAddress) {
        ensureOpen("dma");
        ensureIommu("dma");
        final VfioIova t = new VfioIova(this, VfioIova.Policy.PHYSICAL, physicalAddress);
        otherTranslators.add(t);
        return t;
    }

    /** Allocates DMA memory mapped into this container with the {@link #dma()} policy. */
    public DmaRegion allocate(final DmaOptions options) {
        return DmaMemory.allocate(options.iovaTranslator(dma()));
    }

    synchronized void groupClosed(final VfioGroup group) {
        groups.values().remove(group);
    }

    synchronized boolean hasAllocator() {
        return allocator != null;
    }

    synchronized boolean isNoIommu() {
        return iommuType == IommuType.NOIOMMU;
    }

    /** True once {@link #close()} has run. */
    public synchronized boolean isClosed() {
        return closed;
    }

    void ensureOpen(final String call) {
        if (closed) {
            throw VfioException.refused(NAME, call, "the container is closed");
        }
    }

    private void ensureIommu(final String call) {
        if (info == null) {
            throw VfioException.refused(NAME, call, "no group attached yet: the IOMMU is set when the first group joins");
        }
    }

    private void ensureMappable(final String call) {
        ensureIommu(call);
        if (iommuType == IommuType.NOIOMMU) {
            throw VfioException.refused(NAME, call, "no-IOMMU mode has no DMA mapping (the device uses physical"
                + " addresses): use physicalDma()");
        }
    }

    /**
     * Closes every device and group opened through this container, unmaps every DMA mapping, closes the fd.
     * Every step runs even when one fails; the first failure is thrown at the end. Closing twice is harmless.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        RuntimeException failure = null;
        // Mappings go while the groups still hold the IOMMU; the devices stop DMA first.
        for (final VfioGroup g : new ArrayList<>(groups.values())) {
            failure = Cleanup.run(failure, g::closeDevices);
        }
        final List<DmaMapping> all = new ArrayList<>(mappings.values());
        Collections.reverse(all);
        for (final DmaMapping m : all) {
            failure = Cleanup.run(failure, () -> unmapRaw(m));
        }
        mappings.clear();
        if (dma != null) {
            dma.containerClosed();
        }
        if (physicalDma != null) {
            physicalDma.containerClosed();
        }
        otherTranslators.forEach(VfioIova::containerClosed);
        for (final VfioGroup g : new ArrayList<>(groups.values())) {
            failure = Cleanup.run(failure, g::close);
        }
        groups.clear();
        failure = Cleanup.run(failure, this::closeFd);
        if (failure != null) {
            throw failure;
        }
    }

    private void closeFd() {
        final int f = fd;
        fd = -1;
        if (f >= 0 && sys.close(f) < 0) {
            throw new VfioException(NAME, "close", sys.errno(), null);
        }
    }

    @Override
    public String toString() {
        return "VfioContainer[" + (closed ? "closed" : "fd " + fd + ", " + iommuType + ", " + mappings.size()
            + " mappings, " + groups.size() + " groups") + "]";
    }
}
