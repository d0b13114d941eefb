package io.jhca.memory;

import java.nio.file.Path;
import java.util.Objects;

/**
 * What {@link DmaMemory#allocate(DmaOptions)} should map. Immutable; every setter returns a new instance:
 * <pre>{@code DmaOptions.of(4 << 20).hugePages(true).fallbackToSmallPages(true)}</pre>
 */
public final class DmaOptions {

    private final long length;
    private final boolean hugePages;
    private final Path hugetlbfsMount;
    private final boolean fallbackToSmallPages;
    private final boolean lock;
    private final IovaTranslator iovaTranslator;

    private DmaOptions(final long length, final boolean hugePages, final Path hugetlbfsMount,
                       final boolean fallbackToSmallPages, final boolean lock, final IovaTranslator iovaTranslator) {
        this.length = length;
        this.hugePages = hugePages;
        this.hugetlbfsMount = hugetlbfsMount;
        this.fallbackToSmallPages = fallbackToSmallPages;
        this.lock = lock;
        this.iovaTranslator = iovaTranslator;
    }

    /** Options for {@code length} bytes of small-page, locked memory with identity IOVAs. */
    public static DmaOptions of(final long length) {
        if (length <= 0) {
            throw new IllegalArgumentException("DMA region length must be positive: " + length);
        }
        return new DmaOptions(length, false, null, false, true, IdentityIova.INSTANCE);
    }

    /**
     * Back the region with 2 MiB huge pages (anonymous MAP_HUGETLB). The kernel must have free huge pages
     * reserved ({@code /proc/sys/vm/nr_hugepages}); otherwise allocation throws
     * {@link HugePagesUnavailableException} unless {@link #fallbackToSmallPages(boolean)} is set.
     */
    public DmaOptions hugePages(final boolean enabled) {
        return new DmaOptions(length, enabled, enabled ? hugetlbfsMount : null, fallbackToSmallPages, lock, iovaTranslator);
    }

    /**
     * Back the region with a file on the hugetlbfs mounted at {@code mountDirectory} instead of anonymous
     * MAP_HUGETLB (implies {@link #hugePages(boolean) hugePages(true)}). A uniquely named file is created there,
     * mapped shared and unlinked at once, so nothing is left behind; the page size is the mount's.
     */
    public DmaOptions hugetlbfs(final Path mountDirectory) {
        Objects.requireNonNull(mountDirectory, "mountDirectory");
        return new DmaOptions(length, true, mountDirectory, fallbackToSmallPages, lock, iovaTranslator);
    }

    /** When huge pages were asked for and none are free, use small pages instead of failing. Default false. */
    public DmaOptions fallbackToSmallPages(final boolean enabled) {
        return new DmaOptions(length, hugePages, hugetlbfsMount, enabled, lock, iovaTranslator);
    }

    /**
     * Pin the pages with mlock (default true). A device must only DMA into locked memory; turn it off only for
     * memory that software alone touches. Locking is bounded by RLIMIT_MEMLOCK ({@code ulimit -l}).
     */
    public DmaOptions lock(final boolean enabled) {
        return new DmaOptions(length, hugePages, hugetlbfsMount, fallbackToSmallPages, enabled, iovaTranslator);
    }

    /** How {@link DmaRegion#iova(long)} translates (default {@link IdentityIova}). */
    public DmaOptions iovaTranslator(final IovaTranslator translator) {
        Objects.requireNonNull(translator, "translator");
        return new DmaOptions(length, hugePages, hugetlbfsMount, fallbackToSmallPages, lock, translator);
    }

    /** Requested length in bytes. */
    public long length() {
        return length;
    }

    public boolean hugePages() {
        return hugePages;
    }

    /** The hugetlbfs mount to map from, or null for anonymous memory. */
    public Path hugetlbfsMount() {
        return hugetlbfsMount;
    }

    public boolean fallbackToSmallPages() {
        return fallbackToSmallPages;
    }

    public boolean lock() {
        return lock;
    }

    public IovaTranslator iovaTranslator() {
        return iovaTranslator;
    }

    @Override
    public String toString() {
        return "DmaOptions{length=" + length + ", hugePages=" + hugePages
            + (hugetlbfsMount != null ? ", hugetlbfs=" + hugetlbfsMount : "")
            + ", fallbackToSmallPages=" + fallbackToSmallPages + ", lock=" + lock
            + ", iova=" + iovaTranslator.name() + '}';
    }
}
