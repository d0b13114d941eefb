package io.jhca.connectx;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.MemoryRegion;

/**
 * A file standing for a machine's RAM, mapped shared (QEMU {@code -object memory-backend-file,share=on,mem-path=FILE}
 * on a q35 machine), and the machine's layout of it: guest-physical address = IOVA (the driver maps DMA with
 * IOVA = guest-physical address) = offset in the file for the low part, below {@link #lowSize()}; the rest of RAM
 * sits at {@value #HIGH_BASE_TEXT} at file offset {@code lowSize} (seen with QEMU's {@code info mtree -f}).
 *
 * <p>The model process resolves every DMA through {@link #hostAddress(long, long)}, which refuses any range that is
 * not wholly inside one part of the file: a DMA fault, never a raw access outside the mapping. The driver side of a
 * two-process test carves its DMA memory from the same file ({@link #allocate}), so that IOVA = file offset holds.
 */
public final class GuestRam implements AutoCloseable {

    /** Where RAM above the low part starts in guest-physical space: 4 GiB. */
    public static final long HIGH_BASE = 1L << 32;
    private static final String HIGH_BASE_TEXT = "4 GiB";
    /** q35 puts RAM below this address when all of it fits (vfio-lab: 0 - 0xafffffff). */
    public static final long Q35_LOW_LIMIT = 0xB000_0000L;
    /** The low part's size when RAM does not fit below the limit (QEMU hw/i386/pc_q35.c: lowmem 0x80000000). */
    public static final long Q35_LOW_SPLIT = 0x8000_0000L;
    /** Allocations start above the first MiB: IOVA 0 means "no mailbox", and 0xc0000-0xfffff is ROM in a guest. */
    static final long FIRST_ALLOCATION = 1L << 20;
    private static final long PAGE = 4096;

    private final SharedMapping mapping;
    private final long lowSize;
    private final TreeMap<Long, Long> freeLow = new TreeMap<>();
    private final TreeMap<Long, Long> freeHigh = new TreeMap<>();
    private int live;

    private GuestRam(SharedMapping mapping, long lowSize) {
        this.mapping = mapping;
        this.lowSize = lowSize;
        if (lowSize > FIRST_ALLOCATION) {
            freeLow.put(FIRST_ALLOCATION, lowSize - FIRST_ALLOCATION);
        }
        if (mapping.length() > lowSize) {
            freeHigh.put(lowSize, mapping.length() - lowSize);
        }
    }

    /** The low part's size q35 gives RAM of {@code ramSize} bytes. */
    public static long q35LowSize(long ramSize) {
        return ramSize < Q35_LOW_LIMIT ? ramSize : Q35_LOW_SPLIT;
    }

    /** Maps {@code file} (its whole length is the RAM size) with the q35 layout. */
    public static GuestRam map(Path file) {
        SharedMapping m = SharedMapping.map(file);
        return new GuestRam(m, q35LowSize(m.length()));
    }

    /** Maps {@code file} with a low part of {@code lowSize} bytes (page aligned, at most the file's size). */
    public static GuestRam map(Path file, long lowSize) {
        return map(file, lowSize, 0);
    }

    /**
     * As {@link #map(Path, long)}, at virtual address {@code at} of this process (0: wherever the kernel chooses).
     * A model process and the driver it serves map RAM at the same address so that a memory region's virtual address
     * (what peers put in RETH.VA) is also where the model's RoCE transport finds it: that transport copies at wire
     * addresses, as it does in process, where driver and model share one address space.
     */
    public static GuestRam map(Path file, long lowSize, long at) {
        long size;
        try {
            size = java.nio.file.Files.size(file);
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("cannot map " + file + ": " + e.getMessage(), e);
        }
        SharedMapping m = SharedMapping.map(file, size, at);
        if (lowSize <= 0 || (lowSize & (PAGE - 1)) != 0 || lowSize > m.length() || lowSize > HIGH_BASE) {
            m.close();
            throw new IllegalArgumentException("low RAM of " + lowSize + " bytes does not fit a RAM file of "
                    + m.length() + " bytes (page aligned, at most 4 GiB)");
        }
        return new GuestRam(m, lowSize);
    }

    public Path file() {
        return mapping.file();
    }

    /** RAM size: the file's length. */
    public long size() {
        return mapping.length();
    }

    public long lowSize() {
        return lowSize;
    }

    /** Where this process mapped the file. */
    long address() {
        return mapping.address();
    }

    /** The IOVA (guest-physical address) of file offset {@code offset}. */
    public long iovaOf(long offset) {
        if (offset < 0 || offset >= size()) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside a RAM file of " + size() + " bytes");
        }
        return offset < lowSize ? offset : HIGH_BASE + (offset - lowSize);
    }

    /** The file offset of {@code [iova, iova + length)}, or -1 unless the range lies wholly in one part of RAM. */
    public long offsetOf(long iova, long length) {
        if (length < 0 || iova < 0 || iova + length < iova) {
            return -1;
        }
        if (iova + length <= lowSize) {
            return iova;
        }
        long highLength = size() - lowSize;
        if (iova >= HIGH_BASE && iova - HIGH_BASE <= highLength - length) {
            return lowSize + (iova - HIGH_BASE);
        }
        return -1;
    }

    /** This process's address of {@code [iova, iova + length)}, or -1 when any of it is outside RAM (a DMA fault). */
    long hostAddress(long iova, long length) {
        long off = offsetOf(iova, length);
        return off < 0 ? -1 : address() + off;
    }

    /**
     * Whether {@code [address, address + length)} of this process lies in the mapping (the verbs layer's unsigned
     * check).
     */
    boolean containsHost(long address, long length) {
        return MemoryRegion.spanContains(address(), size(), address, length);
    }

    /**
     * Zeroed DMA memory carved from the file, page aligned, from the low part (IOVA = file offset) or the part above
     * 4 GiB. Closing the region returns it; a region registered as an MR refuses to close, as every DmaRegion does.
     *
     * @throws IllegalStateException when that part of RAM has no room left
     */
    public synchronized DmaRegion allocate(long bytes, boolean aboveFourGiB) {
        if (bytes <= 0) {
            throw new IllegalArgumentException("allocation of " + bytes + " bytes");
        }
        long length = (bytes + PAGE - 1) & -PAGE;
        TreeMap<Long, Long> free = aboveFourGiB ? freeHigh : freeLow;
        for (Map.Entry<Long, Long> e : free.entrySet()) {
            if (e.getValue() >= length) {
                long offset = e.getKey();
                free.remove(offset);
                if (e.getValue() > length) {
                    free.put(offset + length, e.getValue() - length);
                }
                live++;
                long host = address() + offset;
                for (long done = 0; done < length; ) {
                    int n = (int) Math.min(length - done, 1 << 30);
                    new UnsafeBuffer(host + done, n).setMemory(0, n, (byte) 0);
                    done += n;
                }
                return new HostRangeRegion(host, bytes, iovaOf(offset), () -> free(free, offset, length));
            }
        }
        throw new IllegalStateException(String.format("RAM file %s: no %d free bytes %s", file(), length,
                aboveFourGiB ? "above 4 GiB" : "below " + lowSize));
    }

    private synchronized void free(TreeMap<Long, Long> free, long offset, long length) {
        live--;
        long start = offset;
        long len = length;
        Map.Entry<Long, Long> below = free.floorEntry(offset);
        if (below != null && below.getKey() + below.getValue() == offset) {
            start = below.getKey();
            len += below.getValue();
            free.remove(below.getKey());
        }
        Long next = free.get(offset + length);
        if (next != null) {
            len += next;
            free.remove(offset + length);
        }
        free.put(start, len);
    }

    /** Allocations not yet closed. */
    public synchronized int liveAllocations() {
        return live;
    }

    /** Unmaps the file; refused while allocations are open (their memory would go away under them). */
    @Override
    public synchronized void close() {
        if (live > 0) {
            throw new IllegalStateException("RAM file " + file() + " still has " + live + " open allocations");
        }
        mapping.close();
    }

    @Override
    public String toString() {
        return String.format("RAM file %s: %d bytes, low part %d bytes, the rest at 0x%x", file(), size(), lowSize,
                HIGH_BASE);
    }
}
