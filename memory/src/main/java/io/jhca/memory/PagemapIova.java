package io.jhca.memory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * IOVA = physical address, read from /proc/self/pagemap on every call (nothing is cached; the region's pages are
 * locked, so the frames do not move while it lives).
 *
 * <p>Pagemap format (Linux Documentation/admin-guide/mm/pagemap.rst): one 64-bit entry in host byte order per
 * base page, at offset {@code (va / pageSize) * 8}; bit 63 page present, bit 62 swapped, bits 0-54 the page
 * frame number (PFN). Since Linux 4.2 the PFN reads as 0 unless the reader had CAP_SYS_ADMIN when it opened
 * the file, so this translator needs root and says so instead of handing out address 0.
 *
 * <p>Thread-safe (translations are serialized; this is control path). Close it to release the file.
 */
public final class PagemapIova implements IovaTranslator, AutoCloseable {

    private static final Path SELF_PAGEMAP = Path.of("/proc/self/pagemap");
    private static final int ENTRY_BYTES = 8;
    private static final long PRESENT = 1L << 63;
    private static final long SWAPPED = 1L << 62;
    private static final long PFN_MASK = (1L << 55) - 1;

    private final Path path;
    private final long pageSize;
    private final FileChannel channel;
    // Host byte order: the kernel writes the u64 entries as native integers.
    private final ByteBuffer entry = ByteBuffer.allocate(ENTRY_BYTES).order(ByteOrder.nativeOrder());

    /**
     * Opens this process's pagemap.
     *
     * @throws DmaMemoryException when the process lacks CAP_SYS_ADMIN (PFNs would read as 0) or the file cannot
     *                            be opened
     */
    public PagemapIova() {
        this(SELF_PAGEMAP, LibC.INSTANCE.getpagesize());
        if (!ProcFiles.hasCapSysAdmin()) {
            close();
            throw new DmaMemoryException("pagemap IOVA translation needs root (CAP_SYS_ADMIN): without it "
                + SELF_PAGEMAP + " reports every page frame number as 0; run as root or use another translator");
        }
    }

    /** Reads entries from {@code pagemap} (a fake file in tests), for a system page size of {@code pageSize}. */
    PagemapIova(final Path pagemap, final long pageSize) {
        if (pageSize <= 0 || Long.bitCount(pageSize) != 1) {
            throw new IllegalArgumentException("page size must be a power of two: " + pageSize);
        }
        this.path = pagemap;
        this.pageSize = pageSize;
        try {
            this.channel = FileChannel.open(pagemap, StandardOpenOption.READ);
        } catch (final IOException e) {
            throw new DmaMemoryException("cannot open " + pagemap + ": " + e, e);
        }
    }

    @Override
    public synchronized long toIova(final long virtualAddress) {
        if (virtualAddress < 0) {
            throw new IllegalArgumentException("not a user-space address: 0x" + Long.toHexString(virtualAddress));
        }
        final long e = readEntry(virtualAddress);
        if ((e & PRESENT) == 0) {
            throw new DmaMemoryException("page at 0x" + Long.toHexString(virtualAddress) + " is not present"
                + ((e & SWAPPED) != 0 ? " (swapped out)" : "") + " in " + path
                + ": only locked, faulted-in memory (DmaMemory with lock enabled) has a stable physical address");
        }
        final long pfn = e & PFN_MASK;
        if (pfn == 0) {
            throw new DmaMemoryException("page at 0x" + Long.toHexString(virtualAddress) + " reads page frame number 0"
                + " from " + path + ": reading physical addresses needs root (CAP_SYS_ADMIN when the file is"
                + " opened); without it the kernel hides them");
        }
        return pfn * pageSize + (virtualAddress & (pageSize - 1));
    }

    private long readEntry(final long virtualAddress) {
        final long position = (virtualAddress / pageSize) * ENTRY_BYTES;
        entry.clear();
        try {
            while (entry.hasRemaining()) {
                if (channel.read(entry, position + entry.position()) < 0) {
                    throw new DmaMemoryException("no pagemap entry for 0x" + Long.toHexString(virtualAddress)
                        + " in " + path + " (short file)");
                }
            }
        } catch (final IOException e) {
            throw new DmaMemoryException("cannot read " + path + " for 0x" + Long.toHexString(virtualAddress) + ": " + e, e);
        }
        return entry.getLong(0);
    }

    @Override
    public String name() {
        return "pagemap";
    }

    @Override
    public void close() {
        try {
            channel.close();
        } catch (final IOException e) {
            throw new DmaMemoryException("cannot close " + path + ": " + e, e);
        }
    }

    @Override
    public String toString() {
        return "pagemap(" + path + ")";
    }
}
