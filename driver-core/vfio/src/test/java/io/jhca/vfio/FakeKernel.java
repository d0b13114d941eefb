package io.jhca.vfio;

import static io.jhca.vfio.VfioAbi.*;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A fake kernel under {@link Syscalls}: one container node, groups, and one vfio-pci device with BARs, a
 * configuration space, IRQ indexes and a Type1v2 IOMMU, answering ioctls by writing the structs as the kernel
 * would. It counts every call and can fail the Nth one (or every call of a kind) with a chosen errno, and it
 * tracks fds, mmaps and DMA mappings so tests can prove nothing leaks. Eventfds are real (the host kernel's).
 *
 * <p>A failed close, munmap or UNMAP_DMA still releases the resource (as close(2) does): what the tests prove
 * is that the library attempts every release even after a failure, and reports the failure.
 */
final class FakeKernel implements Syscalls {

    static final String DEVICE = "0000:00:03.0";
    static final int GROUP = 7;
    static final long CONFIG_OFFSET = 7L << 40;
    static final int BAR0_SIZE = 0x4000;

    private final Syscalls real = Syscalls.linux();
    private final ThreadLocal<Integer> errno = ThreadLocal.withInitial(() -> 0);
    private final Map<Integer, String> fds = new LinkedHashMap<>();
    private final Map<Long, ByteBuffer> mmaps = new HashMap<>();
    private final Map<Long, Long> mmapLengths = new HashMap<>();
    final TreeMap<Long, long[]> dma = new TreeMap<>(); // iova -> {vaddr, size}
    final List<int[]> irqSets = new ArrayList<>();     // {index, start, count, flags, fds...}
    final byte[] config = new byte[256];
    /** BAR4, an I/O-port BAR reached through pread/pwrite only. */
    final byte[] bar4 = new byte[0x20];
    private int nextFd = 1000;
    private int calls;
    private int failAt = -1;
    private int failErrno = Errno.EIO;
    private String failKind;
    boolean viable = true;
    boolean resetSupported = true;
    boolean containerNodeExists = true;
    /** vfio's unsafe no-IOMMU mode: no Type1 extension, the group node is noiommu-N, every IOMMU ioctl is ENOTTY. */
    boolean noIommu;
    int dmaAvail = 65535;
    int resets;

    FakeKernel() {
        config[0] = 0x34; config[1] = 0x12; config[2] = (byte) 0xe8; config[3] = 0x11; // 1234:11e8
        config[4] = 0x00; config[5] = 0x04; // command: INTx disable
    }

    /** Fail call number {@code n} (1-based, counting every call) with {@code errno}. */
    FakeKernel failCall(final int n, final int errnoValue) {
        this.failAt = n;
        this.failErrno = errnoValue;
        return this;
    }

    /** Fail every call of {@code kind} ("open", "ioctl 0x3b68", "mmap", ...) with {@code errno}. */
    FakeKernel failKind(final String kind, final int errnoValue) {
        this.failKind = kind;
        this.failErrno = errnoValue;
        return this;
    }

    int calls() {
        return calls;
    }

    /** Fds this fake handed out (or real eventfds) that are still open, with what they are. */
    Map<Integer, String> openFds() {
        return new LinkedHashMap<>(fds);
    }

    int liveMmaps() {
        return mmaps.size();
    }

    int commandRegister() {
        return (config[4] & 0xff) | (config[5] & 0xff) << 8;
    }

    private boolean fail(final String kind) {
        calls++;
        if (calls == failAt || kind.equals(failKind)) {
            errno.set(failErrno);
            return true;
        }
        return false;
    }

    private int err(final int e) {
        errno.set(e);
        return -1;
    }

    @Override
    public int open(final String path, final int flags) {
        if (fail("open")) {
            return -1;
        }
        final String kind;
        if (path.endsWith("/vfio/vfio")) {
            if (!containerNodeExists) {
                return err(Errno.ENOENT);
            }
            kind = "container";
        } else if (path.endsWith("/vfio/" + (noIommu ? "noiommu-" : "") + GROUP)) {
            kind = "group";
        } else {
            return err(Errno.ENOENT);
        }
        final int fd = nextFd++;
        fds.put(fd, kind);
        return fd;
    }

    @Override
    public int close(final int fd) {
        final boolean failed = fail("close");
        final String kind = fds.remove(fd);
        if (kind == null) {
            return err(Errno.EBADF);
        }
        if (kind.equals("eventfd")) {
            real.close(fd);
        }
        return failed ? -1 : 0;
    }

    @Override
    public int ioctl(final int fd, final long request, final long arg) {
        if (fail("ioctl 0x" + Long.toHexString(request))) {
            if (request == VFIO_IOMMU_UNMAP_DMA && fds.containsKey(fd)) {
                final UnsafeBuffer b = new UnsafeBuffer(arg, DMA_UNMAP_SIZE);
                dma.remove(b.getLong(DMA_UNMAP_IOVA)); // released anyway, see the class comment
            }
            return -1;
        }
        final String kind = fds.get(fd);
        if (kind == null) {
            return err(Errno.EBADF);
        }
        switch (kind) {
            case "container": return containerIoctl(request, arg);
            case "group": return groupIoctl(request, arg);
            case "device": return deviceIoctl(request, arg);
            default: return err(Errno.ENOTTY);
        }
    }

    private int containerIoctl(final long request, final long arg) {
        if (request == VFIO_GET_API_VERSION) {
            return VFIO_API_VERSION;
        }
        if (request == VFIO_CHECK_EXTENSION) {
            if (noIommu) {
                return arg == VFIO_NOIOMMU_IOMMU ? 1 : 0;
            }
            return arg == VFIO_TYPE1v2_IOMMU || arg == VFIO_TYPE1_IOMMU ? 1 : 0;
        }
        if (request == VFIO_SET_IOMMU) {
            return arg == (noIommu ? VFIO_NOIOMMU_IOMMU : VFIO_TYPE1v2_IOMMU) ? 0 : err(Errno.EINVAL);
        }
        if (noIommu) {
            return err(Errno.ENOTTY);
        }
        if (request == VFIO_IOMMU_GET_INFO) {
            final UnsafeBuffer head = new UnsafeBuffer(arg, IOMMU_INFO_SIZE);
            final int need = IOMMU_INFO_SIZE + 8 /* pad to 8 */ + (IOVA_RANGE_RANGES + 2 * IOVA_RANGE_SIZE) + 16;
            final int argsz = head.getInt(0);
            head.putInt(IOMMU_INFO_FLAGS, VFIO_IOMMU_INFO_PGSIZES | VFIO_IOMMU_INFO_CAPS);
            head.putLong(IOMMU_INFO_PGSIZES, 0x40201000L); // 4 KiB | 2 MiB | 1 GiB
            if (argsz < need) {
                head.putInt(0, need);
                head.putInt(IOMMU_INFO_CAP_OFFSET, 0);
                return 0;
            }
            final UnsafeBuffer b = new UnsafeBuffer(arg, need);
            final int range = 32;
            b.putInt(IOMMU_INFO_CAP_OFFSET, range);
            b.putShort(range + CAP_HEADER_ID, (short) VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE);
            b.putShort(range + CAP_HEADER_VERSION, (short) 1);
            final int avail = range + IOVA_RANGE_RANGES + 2 * IOVA_RANGE_SIZE;
            b.putInt(range + CAP_HEADER_NEXT, avail);
            b.putInt(range + IOVA_RANGE_NR_IOVAS, 2);
            b.putLong(range + IOVA_RANGE_RANGES, 0x0L);
            b.putLong(range + IOVA_RANGE_RANGES + 8, 0xfedfffffL);
            b.putLong(range + IOVA_RANGE_RANGES + 16, 0xfef00000L);
            b.putLong(range + IOVA_RANGE_RANGES + 24, (1L << 48) - 1);
            b.putShort(avail + CAP_HEADER_ID, (short) VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL);
            b.putShort(avail + CAP_HEADER_VERSION, (short) 1);
            b.putInt(avail + CAP_HEADER_NEXT, 0);
            b.putInt(avail + DMA_AVAIL_AVAIL, dmaAvail);
            return 0;
        }
        if (request == VFIO_IOMMU_MAP_DMA) {
            final UnsafeBuffer b = new UnsafeBuffer(arg, DMA_MAP_SIZE);
            final long iova = b.getLong(DMA_MAP_IOVA);
            final long size = b.getLong(DMA_MAP_MAP_SIZE);
            if (b.getInt(0) != DMA_MAP_SIZE || (b.getInt(DMA_MAP_FLAGS) & 3) != 3 || size <= 0 || ((iova | size) & 0xfff) != 0) {
                return err(Errno.EINVAL);
            }
            final var below = dma.floorEntry(iova + size - 1);
            if (below != null && below.getKey() + below.getValue()[1] > iova) {
                return err(Errno.EEXIST);
            }
            if (dma.size() >= dmaAvail) {
                return err(Errno.ENOSPC);
            }
            dma.put(iova, new long[] {b.getLong(DMA_MAP_VADDR), size});
            return 0;
        }
        if (request == VFIO_IOMMU_UNMAP_DMA) {
            final UnsafeBuffer b = new UnsafeBuffer(arg, DMA_UNMAP_SIZE);
            final long[] m = dma.remove(b.getLong(DMA_UNMAP_IOVA));
            b.putLong(DMA_UNMAP_UNMAP_SIZE, m == null ? 0 : m[1]);
            return 0;
        }
        return err(Errno.ENOTTY);
    }

    private boolean containerSet;

    private int groupIoctl(final long request, final long arg) {
        if (request == VFIO_GROUP_GET_STATUS) {
            final UnsafeBuffer b = new UnsafeBuffer(arg, GROUP_STATUS_SIZE);
            b.putInt(GROUP_STATUS_FLAGS, (viable ? VFIO_GROUP_FLAGS_VIABLE : 0) | (containerSet ? VFIO_GROUP_FLAGS_CONTAINER_SET : 0));
            return 0;
        }
        if (request == VFIO_GROUP_SET_CONTAINER) {
            final int c = new UnsafeBuffer(arg, 4).getInt(0);
            if (!"container".equals(fds.get(c))) {
                return err(Errno.EBADF);
            }
            containerSet = true;
            return 0;
        }
        if (request == VFIO_GROUP_UNSET_CONTAINER) {
            containerSet = false;
            return 0;
        }
        if (request == VFIO_GROUP_GET_DEVICE_FD) {
            final UnsafeBuffer b = new UnsafeBuffer(arg, 64);
            final StringBuilder name = new StringBuilder();
            for (int i = 0; i < 64 && b.getByte(i) != 0; i++) {
                name.append((char) b.getByte(i));
            }
            if (!name.toString().equals(DEVICE)) {
                return err(Errno.ENODEV);
            }
            if (fds.containsValue("device")) {
                return err(Errno.EBUSY);
            }
            final int fd = nextFd++;
            fds.put(fd, "device");
            return fd;
        }
        return err(Errno.ENOTTY);
    }

    private int deviceIoctl(final long request, final long arg) {
        if (request == VFIO_DEVICE_GET_INFO) {
            final UnsafeBuffer b = new UnsafeBuffer(arg, DEVICE_INFO_SIZE);
            b.putInt(DEVICE_INFO_FLAGS, VFIO_DEVICE_FLAGS_PCI | (resetSupported ? VFIO_DEVICE_FLAGS_RESET : 0));
            b.putInt(DEVICE_INFO_NUM_REGIONS, 9);
            b.putInt(DEVICE_INFO_NUM_IRQS, 5);
            return 0;
        }
        if (request == VFIO_DEVICE_GET_REGION_INFO) {
            final UnsafeBuffer head = new UnsafeBuffer(arg, REGION_INFO_SIZE);
            final int index = head.getInt(REGION_INFO_INDEX);
            final int argsz = head.getInt(0);
            head.putLong(REGION_INFO_OFFSET, (long) index << 40);
            switch (index) {
                case 0:
                    head.putInt(REGION_INFO_FLAGS, VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE | VFIO_REGION_INFO_FLAG_MMAP);
                    head.putLong(REGION_INFO_REGION_SIZE, BAR0_SIZE);
                    return 0;
                case 2: {
                    // A BAR with an MSI-X table in the middle: mmappable around it (sparse mmap capability).
                    final int need = REGION_INFO_SIZE + SPARSE_MMAP_AREAS + 2 * SPARSE_MMAP_AREA_SIZE;
                    head.putInt(REGION_INFO_FLAGS, VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE
                        | VFIO_REGION_INFO_FLAG_MMAP | VFIO_REGION_INFO_FLAG_CAPS);
                    head.putLong(REGION_INFO_REGION_SIZE, 0x10000);
                    if (argsz < need) {
                        head.putInt(0, need);
                        return 0;
                    }
                    final UnsafeBuffer b = new UnsafeBuffer(arg, need);
                    b.putInt(REGION_INFO_CAP_OFFSET, REGION_INFO_SIZE);
                    b.putShort(REGION_INFO_SIZE + CAP_HEADER_ID, (short) VFIO_REGION_INFO_CAP_SPARSE_MMAP);
                    b.putShort(REGION_INFO_SIZE + CAP_HEADER_VERSION, (short) 1);
                    b.putInt(REGION_INFO_SIZE + SPARSE_MMAP_NR_AREAS, 2);
                    b.putLong(REGION_INFO_SIZE + SPARSE_MMAP_AREAS, 0);
                    b.putLong(REGION_INFO_SIZE + SPARSE_MMAP_AREAS + 8, 0x2000);
                    b.putLong(REGION_INFO_SIZE + SPARSE_MMAP_AREAS + 16, 0x3000);
                    b.putLong(REGION_INFO_SIZE + SPARSE_MMAP_AREAS + 24, 0xd000);
                    return 0;
                }
                case 4: // an I/O-port BAR: read/write through the fd only
                    head.putInt(REGION_INFO_FLAGS, VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE);
                    head.putLong(REGION_INFO_REGION_SIZE, 0x20);
                    return 0;
                case 6: // the expansion ROM: read-only, as vfio-pci offers it
                    head.putInt(REGION_INFO_FLAGS, VFIO_REGION_INFO_FLAG_READ);
                    head.putLong(REGION_INFO_REGION_SIZE, 0x800);
                    return 0;
                case 7:
                    head.putInt(REGION_INFO_FLAGS, VFIO_REGION_INFO_FLAG_READ | VFIO_REGION_INFO_FLAG_WRITE);
                    head.putLong(REGION_INFO_REGION_SIZE, config.length);
                    return 0;
                default:
                    head.putInt(REGION_INFO_FLAGS, 0);
                    head.putLong(REGION_INFO_REGION_SIZE, 0);
                    return 0;
            }
        }
        if (request == VFIO_DEVICE_GET_IRQ_INFO) {
            final UnsafeBuffer b = new UnsafeBuffer(arg, IRQ_INFO_SIZE);
            final int index = b.getInt(IRQ_INFO_INDEX);
            final int[] counts = {1, 1, 4, 1, 1};
            if (index < 0 || index >= counts.length) {
                return err(Errno.EINVAL);
            }
            b.putInt(IRQ_INFO_FLAGS, VFIO_IRQ_INFO_EVENTFD | (index == 0 ? VFIO_IRQ_INFO_MASKABLE | VFIO_IRQ_INFO_AUTOMASKED
                : VFIO_IRQ_INFO_NORESIZE));
            b.putInt(IRQ_INFO_COUNT, counts[index]);
            return 0;
        }
        if (request == VFIO_DEVICE_SET_IRQS) {
            final UnsafeBuffer head = new UnsafeBuffer(arg, IRQ_SET_SIZE);
            final int count = head.getInt(IRQ_SET_COUNT);
            final UnsafeBuffer b = new UnsafeBuffer(arg, IRQ_SET_SIZE + 4 * count);
            final int[] rec = new int[4 + count];
            rec[0] = b.getInt(IRQ_SET_INDEX);
            rec[1] = b.getInt(IRQ_SET_START);
            rec[2] = count;
            rec[3] = b.getInt(IRQ_SET_FLAGS);
            for (int i = 0; i < count; i++) {
                rec[4 + i] = b.getInt(IRQ_SET_DATA + 4 * i);
            }
            irqSets.add(rec);
            return 0;
        }
        if (request == VFIO_DEVICE_RESET) {
            resets++;
            return resetSupported ? 0 : err(Errno.ENOTTY);
        }
        return err(Errno.ENOTTY);
    }

    @Override
    public long mmap(final long length, final int prot, final int flags, final int fd, final long offset) {
        if (fail("mmap")) {
            return -1;
        }
        if (!"device".equals(fds.get(fd))) {
            return err(Errno.EBADF);
        }
        final ByteBuffer memory = ByteBuffer.allocateDirect((int) length + 4096);
        final long base = new UnsafeBuffer(memory).addressOffset();
        final long address = (base + 4095) & -4096L;
        mmaps.put(address, memory);
        mmapLengths.put(address, length);
        return address;
    }

    @Override
    public int munmap(final long address, final long length) {
        final boolean failed = fail("munmap");
        final Long len = mmapLengths.remove(address);
        mmaps.remove(address);
        if (len == null || len != length) {
            return err(Errno.EINVAL);
        }
        return failed ? -1 : 0;
    }

    @Override
    public long pread(final int fd, final long buffer, final long count, final long offset) {
        if (fail("pread")) {
            return -1;
        }
        if (!"device".equals(fds.get(fd))) {
            return err(Errno.EBADF);
        }
        final byte[] region = offset >= CONFIG_OFFSET ? config : bar4;
        final int at = (int) (offset - (offset >= CONFIG_OFFSET ? CONFIG_OFFSET : 4L << 40));
        if (at < 0 || at + count > region.length) {
            return err(Errno.EINVAL);
        }
        new UnsafeBuffer(buffer, (int) count).putBytes(0, region, at, (int) count);
        return count;
    }

    @Override
    public long pwrite(final int fd, final long buffer, final long count, final long offset) {
        if (fail("pwrite")) {
            return -1;
        }
        if (!"device".equals(fds.get(fd))) {
            return err(Errno.EBADF);
        }
        final byte[] region = offset >= CONFIG_OFFSET ? config : bar4;
        final int at = (int) (offset - (offset >= CONFIG_OFFSET ? CONFIG_OFFSET : 4L << 40));
        if (at < 0 || at + count > region.length) {
            return err(Errno.EINVAL);
        }
        new UnsafeBuffer(buffer, (int) count).getBytes(0, region, at, (int) count);
        return count;
    }

    @Override
    public long read(final int fd, final long buffer, final long count) {
        if (fail("read")) {
            return -1;
        }
        final long n = real.read(fd, buffer, count);
        if (n < 0) {
            errno.set(real.errno());
        }
        return n;
    }

    @Override
    public long write(final int fd, final long buffer, final long count) {
        if (fail("write")) {
            return -1;
        }
        final long n = real.write(fd, buffer, count);
        if (n < 0) {
            errno.set(real.errno());
        }
        return n;
    }

    @Override
    public int eventfd(final int initialValue, final int flags) {
        if (fail("eventfd")) {
            return -1;
        }
        final int fd = real.eventfd(initialValue, flags);
        if (fd < 0) {
            errno.set(real.errno());
            return -1;
        }
        fds.put(fd, "eventfd");
        return fd;
    }

    @Override
    public int poll(final long pollfds, final int nfds, final int timeoutMillis) {
        if (fail("poll")) {
            return -1;
        }
        final int r = real.poll(pollfds, nfds, timeoutMillis);
        if (r < 0) {
            errno.set(real.errno());
        }
        return r;
    }

    @Override
    public int errno() {
        return errno.get();
    }

    /** Raises an interrupt: signals the eventfd wired to {@code vector} of {@code index} by the last SET_IRQS that set it. */
    void fire(final int index, final int vector) {
        for (int i = irqSets.size() - 1; i >= 0; i--) {
            final int[] s = irqSets.get(i);
            if (s[0] == index && vector >= s[1] && vector < s[1] + s[2]) {
                final int fd = s[4 + vector - s[1]];
                final UnsafeBuffer one = new UnsafeBuffer(ByteBuffer.allocateDirect(8));
                one.putLong(0, 1);
                if (real.write(fd, one.addressOffset(), 8) != 8) {
                    throw new IllegalStateException("cannot signal eventfd " + fd);
                }
                return;
            }
        }
        throw new IllegalStateException("vector " + vector + " of index " + index + " is not wired");
    }
}
