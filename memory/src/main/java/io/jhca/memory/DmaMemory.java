package io.jhca.memory;

import static io.jhca.memory.LinuxConstants.EINVAL;
import static io.jhca.memory.LinuxConstants.ENOMEM;
import static io.jhca.memory.LinuxConstants.EPERM;
import static io.jhca.memory.LinuxConstants.HUGE_PAGE_2MB;
import static io.jhca.memory.LinuxConstants.MADV_DONTFORK;
import static io.jhca.memory.LinuxConstants.MAP_ANONYMOUS;
import static io.jhca.memory.LinuxConstants.MAP_FAILED;
import static io.jhca.memory.LinuxConstants.MAP_HUGETLB;
import static io.jhca.memory.LinuxConstants.MAP_HUGE_2MB;
import static io.jhca.memory.LinuxConstants.MAP_POPULATE;
import static io.jhca.memory.LinuxConstants.MAP_PRIVATE;
import static io.jhca.memory.LinuxConstants.MAP_SHARED;
import static io.jhca.memory.LinuxConstants.O_CLOEXEC;
import static io.jhca.memory.LinuxConstants.O_CREAT;
import static io.jhca.memory.LinuxConstants.O_EXCL;
import static io.jhca.memory.LinuxConstants.O_RDWR;
import static io.jhca.memory.LinuxConstants.PROT_READ;
import static io.jhca.memory.LinuxConstants.PROT_WRITE;

import java.io.IOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicLong;

import jnr.ffi.Platform;
import jnr.ffi.Pointer;

/**
 * Allocates DMA memory: a page-aligned anonymous (or hugetlbfs) mapping, faulted in, locked with mlock and
 * excluded from fork with MADV_DONTFORK, the steps rdma-core takes for registered memory (ibv_dontfork_range)
 * so a fork cannot move pages under a device. Control path; every failure undoes what was done and throws
 * {@link DmaMemoryException} with the reason and the fix.
 */
public final class DmaMemory {

    private static final AtomicLong HUGETLBFS_FILE_ID = new AtomicLong();

    private DmaMemory() {
    }

    /** {@code bytes} of locked small-page memory with identity IOVAs. */
    public static DmaRegion allocate(final long bytes) {
        return allocate(DmaOptions.of(bytes));
    }

    /** A region as {@code options} describe it. */
    public static DmaRegion allocate(final DmaOptions options) {
        if (Platform.getNativePlatform().getOS() != Platform.OS.LINUX) {
            throw new DmaMemoryException("DMA memory needs Linux (mmap/mlock/madvise semantics), not "
                + Platform.getNativePlatform().getOS());
        }
        final long smallPage = LibC.INSTANCE.getpagesize();
        Mapping mapping;
        if (options.hugePages()) {
            final long hugePage = options.hugetlbfsMount() != null ? hugetlbfsPageSize(options.hugetlbfsMount()) : HUGE_PAGE_2MB;
            mapping = options.hugetlbfsMount() != null
                ? mapHugetlbfs(options.length(), options.hugetlbfsMount(), hugePage)
                : mapAnonymous(options.length(), HUGE_PAGE_2MB, MAP_HUGETLB | MAP_HUGE_2MB);
            if (mapping == null) {
                if (!options.fallbackToSmallPages()) {
                    throw hugePagesUnavailable(options, hugePage);
                }
                mapping = mapAnonymous(options.length(), smallPage, 0);
            }
        } else {
            mapping = mapAnonymous(options.length(), smallPage, 0);
        }
        return pin(mapping, options);
    }

    /** Where a fresh mapping lives. */
    private record Mapping(long address, long mappedLength, long pageSize) {
    }

    /** An anonymous private mapping; null when huge pages were asked for and the kernel has none. */
    private static Mapping mapAnonymous(final long length, final long pageSize, final int hugeFlags) {
        final long mapped = roundUp(length, pageSize);
        final Pointer p = LibC.INSTANCE.mmap(null, mapped, PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | hugeFlags, -1, 0);
        if (p == null || p.address() == MAP_FAILED) {
            final int errno = LibC.errno();
            // ENOMEM: no free huge pages of that size; EINVAL: the kernel has no 2 MiB hugetlb pool at all.
            if (hugeFlags != 0 && (errno == ENOMEM || errno == EINVAL)) {
                return null;
            }
            throw new DmaMemoryException("mmap of " + mapped + " bytes (anonymous, page " + pageSize + ") failed: "
                + LibC.describe(errno));
        }
        return new Mapping(p.address(), mapped, pageSize);
    }

    /** A shared mapping of a new, at once unlinked file on a hugetlbfs mount; null when no huge pages are free. */
    private static Mapping mapHugetlbfs(final long length, final Path mount, final long pageSize) {
        final long mapped = roundUp(length, pageSize);
        final Path file = mount.resolve("jhca-dma-" + ProcessHandle.current().pid() + "-" + HUGETLBFS_FILE_ID.incrementAndGet());
        final int fd = LibC.INSTANCE.open(file.toString(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
        if (fd < 0) {
            throw new DmaMemoryException("cannot create " + file + " on hugetlbfs: " + LibC.describe(LibC.errno()));
        }
        try {
            if (LibC.INSTANCE.ftruncate(fd, mapped) != 0) {
                final int errno = LibC.errno();
                if (errno == ENOMEM || errno == EINVAL) {
                    return null;
                }
                throw new DmaMemoryException("ftruncate of " + file + " to " + mapped + " bytes failed: " + LibC.describe(errno));
            }
            final Pointer p = LibC.INSTANCE.mmap(null, mapped, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
            if (p == null || p.address() == MAP_FAILED) {
                final int errno = LibC.errno();
                if (errno == ENOMEM) {
                    return null;
                }
                throw new DmaMemoryException("mmap of " + file + " (" + mapped + " bytes) failed: " + LibC.describe(errno));
            }
            return new Mapping(p.address(), mapped, pageSize);
        } finally {
            // The mapping keeps the pages; neither the fd nor the name is needed any more.
            LibC.INSTANCE.close(fd);
            try {
                Files.deleteIfExists(file);
            } catch (final IOException e) {
                // a leftover empty file costs no huge pages once the mapping is gone; say so but do not fail
                System.err.println("jhca: could not remove " + file + ": " + e);
            }
        }
    }

    private static long hugetlbfsPageSize(final Path mount) {
        try {
            final FileStore store = Files.getFileStore(mount);
            if (!"hugetlbfs".equals(store.type())) {
                throw new DmaMemoryException(mount + " is on a " + store.type() + " file system, not hugetlbfs"
                    + " (mount one with `mount -t hugetlbfs -o pagesize=2M none <dir>`)");
            }
            // statfs(2) on hugetlbfs reports the huge page size as the block size.
            return store.getBlockSize();
        } catch (final IOException e) {
            throw new DmaMemoryException("cannot inspect hugetlbfs mount " + mount + ": " + e, e);
        }
    }

    /** Lock, keep out of fork, map for the device, wrap; on any failure the mapping is undone. */
    private static DmaRegion pin(final Mapping m, final DmaOptions options) {
        final Pointer p = LibC.pointer(m.address());
        boolean deviceMapped = false;
        try {
            if (options.lock() && LibC.INSTANCE.mlock(p, m.mappedLength()) != 0) {
                throw lockFailed(LibC.errno(), m.mappedLength());
            }
            if (LibC.INSTANCE.madvise(p, m.mappedLength(), MADV_DONTFORK) != 0) {
                throw new DmaMemoryException("madvise(MADV_DONTFORK) of " + m.mappedLength() + " bytes failed: "
                    + LibC.describe(LibC.errno()));
            }
            options.iovaTranslator().map(m.address(), m.mappedLength());
            deviceMapped = true;
            return new MappedRegion(m.address(), options.length(), m.mappedLength(), m.pageSize(), options.lock(),
                options.iovaTranslator());
        } catch (final RuntimeException | Error e) {
            try {
                if (deviceMapped) {
                    options.iovaTranslator().unmap(m.address(), m.mappedLength());
                }
            } finally {
                unmap(m.address(), m.mappedLength());
            }
            throw e;
        }
    }

    private static DmaMemoryException lockFailed(final int errno, final long bytes) {
        final StringBuilder message = new StringBuilder()
            .append("mlock of ").append(bytes).append(" bytes failed: ").append(LibC.describe(errno)).append(". ");
        if (errno == ENOMEM || errno == EPERM) {
            message.append("Locked (pinned) memory is capped by RLIMIT_MEMLOCK, now ")
                .append(ProcFiles.memlockSoftLimit())
                .append(" for this process (\"Max locked memory\" in /proc/self/limits). Raise it with `ulimit -l <KiB>`")
                .append(" or `ulimit -l unlimited` in the launching shell (LimitMEMLOCK= for a systemd service,")
                .append(" memlock in /etc/security/limits.conf, --ulimit memlock=-1 for a container), or run with")
                .append(" CAP_IPC_LOCK. Memory no device will DMA into can be allocated with DmaOptions.lock(false).");
        } else {
            message.append("The pages could not be pinned.");
        }
        return new DmaMemoryException(message.toString());
    }

    private static HugePagesUnavailableException hugePagesUnavailable(final DmaOptions options, final long hugePage) {
        final long needed = roundUp(options.length(), hugePage) / hugePage;
        final long free = ProcFiles.number(ProcFiles.MEMINFO, "HugePages_Free");
        final long total = ProcFiles.number(ProcFiles.MEMINFO, "HugePages_Total");
        final long sizeKb = ProcFiles.number(ProcFiles.MEMINFO, "Hugepagesize");
        final StringBuilder message = new StringBuilder()
            .append("no huge pages available for a ").append(options.length()).append("-byte DMA region")
            .append(options.hugetlbfsMount() != null ? " on hugetlbfs " + options.hugetlbfsMount() : "")
            .append(" (needs ").append(needed).append(" page(s) of ").append(hugePage / 1024).append(" kB). /proc/meminfo: HugePages_Free ")
            .append(free).append(" of HugePages_Total ").append(total).append(", Hugepagesize ").append(sizeKb)
            .append(" kB. Reserve huge pages as root with `echo <count> > /proc/sys/vm/nr_hugepages`")
            .append(" (persistently: vm.nr_hugepages in /etc/sysctl.conf, or hugepages=<count> on the kernel command line)");
        if (sizeKb > 0 && sizeKb != HUGE_PAGE_2MB / 1024) {
            message.append("; the default huge page size here is ").append(sizeKb)
                .append(" kB, so reserve 2 MiB pages in /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
        }
        message.append(", or allow small pages with DmaOptions.fallbackToSmallPages(true).");
        return new HugePagesUnavailableException(message.toString());
    }

    /** munmap, for allocation failures and {@link MappedRegion#close()}. */
    static void unmap(final long address, final long mappedLength) {
        if (LibC.INSTANCE.munmap(LibC.pointer(address), mappedLength) != 0) {
            throw new DmaMemoryException("munmap of 0x" + Long.toHexString(address) + "+" + mappedLength
                + " failed: " + LibC.describe(LibC.errno()));
        }
    }

    private static long roundUp(final long length, final long pageSize) {
        if (length > Long.MAX_VALUE - (pageSize - 1)) {
            throw new IllegalArgumentException("DMA region length too large: " + length);
        }
        return (length + pageSize - 1) & -pageSize;
    }
}
