package io.jhca.vfio;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Hands out IO virtual addresses from the IOMMU's usable ranges, as rdma-core's mlx5_vfio does with its
 * interval set (providers/mlx5/mlx5_vfio.c, util/interval_set.c): first fit, every block a multiple of the
 * IOMMU page size and aligned as asked; freed blocks merge with their neighbours.
 *
 * <p>Free space is a map from start to end (inclusive). Addresses are treated as unsigned; ranges reaching the
 * top of the 64-bit space are clipped to 2^63 - 1 so that arithmetic never wraps. Not thread-safe; the
 * container serializes calls.
 */
public final class IovaAllocator {

    private static final long TOP = Long.MAX_VALUE;

    private final long pageSize;
    private final TreeMap<Long, Long> free = new TreeMap<>();
    private final List<IovaRange> ranges;

    /**
     * @param ranges   usable IOVA ranges (inclusive ends), e.g. {@link IommuInfo#ranges()}
     * @param pageSize the IOMMU page size, a power of two; ranges are trimmed to whole pages
     */
    public IovaAllocator(final List<IovaRange> ranges, final long pageSize) {
        if (pageSize <= 0 || Long.bitCount(pageSize) != 1) {
            throw new IllegalArgumentException("IOMMU page size must be a power of two: " + pageSize);
        }
        this.pageSize = pageSize;
        this.ranges = List.copyOf(ranges);
        for (final IovaRange r : ranges) {
            if (r.start() < 0) {
                continue; // above 2^63: out of reach of signed arithmetic, and of any real IOMMU's aperture
            }
            final long end = r.end() < 0 ? TOP : r.end();
            final long start = alignUp(r.start(), pageSize);
            if (start < 0) {
                continue;
            }
            // last byte of the last whole page; for end = 2^63 - 1 the sum wraps and the result is 2^63 - 1 again
            final long last = ((end + 1) & -pageSize) - 1;
            if (start <= last) {
                insertFree(start, last);
            }
        }
    }

    /** The IOMMU page size every block is a multiple of. */
    public long pageSize() {
        return pageSize;
    }

    /** The ranges this allocator was seeded with. */
    public List<IovaRange> ranges() {
        return ranges;
    }

    /** A block of {@code size} bytes (rounded up to pages) aligned to the page size. */
    public long allocate(final long size) {
        return allocate(size, pageSize);
    }

    /**
     * A block of {@code size} bytes (rounded up to whole pages) whose start is a multiple of {@code alignment}
     * (a power of two; at least the page size is used).
     *
     * @throws VfioException when no free range can hold it
     */
    public long allocate(final long size, final long alignment) {
        if (size <= 0) {
            throw new IllegalArgumentException("IOVA block size must be positive: " + size);
        }
        if (alignment <= 0 || Long.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("IOVA alignment must be a power of two: " + alignment);
        }
        final long length = roundUp(size);
        final long align = Math.max(alignment, pageSize);
        for (final Map.Entry<Long, Long> e : free.entrySet()) {
            final long start = alignUp(e.getKey(), align);
            if (start < 0) {
                continue;
            }
            final long end = e.getValue();
            // start + length - 1 <= end, written so that nothing overflows
            if (start <= end && length - 1 <= end - start) {
                take(e.getKey(), end, start, start + length - 1);
                return start;
            }
        }
        throw VfioException.refused("container", "IOVA allocation", "no free IOVA block of 0x" + Long.toHexString(length)
            + " bytes aligned to 0x" + Long.toHexString(align) + " in " + ranges + " (free: " + freeBytes() + " bytes in "
            + free.size() + " pieces); unmap something or map larger, fewer regions");
    }

    /**
     * Takes the exact block {@code [iova, iova + size)} (rounded out to pages), for mappings whose IOVA is chosen
     * elsewhere (the physical policy).
     *
     * @throws VfioException when any of it is outside the usable ranges or already taken
     */
    public void reserve(final long iova, final long size) {
        if (size <= 0) {
            throw new IllegalArgumentException("IOVA block size must be positive: " + size);
        }
        final long start = iova & -pageSize;
        final long last = alignUp(iova + size, pageSize) - 1;
        if (iova < 0 || last < start) {
            throw new IllegalArgumentException("IOVA block 0x" + Long.toHexString(iova) + "+" + size + " wraps");
        }
        final Map.Entry<Long, Long> e = free.floorEntry(start);
        if (e == null || e.getValue() < last) {
            throw VfioException.refused("container", "IOVA reservation", "[0x" + Long.toHexString(start) + "-0x"
                + Long.toHexString(last) + "] is not free: outside the usable ranges " + ranges + " or already mapped");
        }
        take(e.getKey(), e.getValue(), start, last);
    }

    /**
     * Returns a block to the free set.
     *
     * @throws IllegalStateException when any part of it is already free (a double free)
     */
    public void free(final long iova, final long size) {
        if (size <= 0 || iova < 0) {
            throw new IllegalArgumentException("bad IOVA block 0x" + Long.toHexString(iova) + "+" + size);
        }
        final long start = iova & -pageSize;
        final long last = alignUp(iova + size, pageSize) - 1;
        final Map.Entry<Long, Long> below = free.floorEntry(last);
        if (below != null && below.getValue() >= start) {
            throw new IllegalStateException("IOVA block [0x" + Long.toHexString(start) + "-0x" + Long.toHexString(last)
                + "] freed twice (overlaps free [0x" + Long.toHexString(below.getKey()) + "-0x"
                + Long.toHexString(below.getValue()) + "])");
        }
        insertFree(start, last);
    }

    /** Free bytes left. */
    public long freeBytes() {
        long n = 0;
        for (final Map.Entry<Long, Long> e : free.entrySet()) {
            n += e.getValue() - e.getKey() + 1;
        }
        return n;
    }

    /** The free ranges, in order (for tests and diagnostics). */
    public List<IovaRange> freeRanges() {
        final List<IovaRange> out = new ArrayList<>();
        free.forEach((s, e) -> out.add(new IovaRange(s, e)));
        return out;
    }

    private void take(final long freeStart, final long freeEnd, final long start, final long last) {
        free.remove(freeStart);
        if (freeStart < start) {
            free.put(freeStart, start - 1);
        }
        if (last < freeEnd) {
            free.put(last + 1, freeEnd);
        }
    }

    private void insertFree(long start, long last) {
        final Map.Entry<Long, Long> before = free.floorEntry(start);
        if (before != null && before.getValue() != TOP && before.getValue() + 1 >= start) {
            start = before.getKey();
            last = Math.max(last, before.getValue());
            free.remove(before.getKey());
        }
        final Map.Entry<Long, Long> after = last == TOP ? null : free.ceilingEntry(start);
        if (after != null && after.getKey() <= last + 1) {
            last = Math.max(last, after.getValue());
            free.remove(after.getKey());
        }
        free.put(start, last);
    }

    private long roundUp(final long size) {
        final long r = alignUp(size, pageSize);
        if (r <= 0) {
            throw new IllegalArgumentException("IOVA block size too large: " + size);
        }
        return r;
    }

    private static long alignUp(final long value, final long alignment) {
        return (value + alignment - 1) & -alignment;
    }
}
