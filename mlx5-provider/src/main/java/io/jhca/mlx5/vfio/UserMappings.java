package io.jhca.mlx5.vfio;

import java.util.Map;
import java.util.TreeMap;

/**
 * The user memory a function mapped into its IOMMU for memory registrations: one mapping per page-aligned span,
 * counted, so that MRs over the same pages (two MRs of one region, an MR of a slice inside a mapped region) share
 * it and the last one unmaps it. Memory the function allocated itself is already mapped and is left alone. Not
 * thread-safe: the function's lock guards it.
 */
final class UserMappings {

    /** What the IOMMU is asked to do; {@code translates}: whether a byte is mapped already. */
    interface Iommu {
        void map(long start, long length);

        void unmap(long start, long length);

        boolean translates(long address);
    }

    private static final long PAGE = 4096;

    private static final class Span {
        final long start;
        final long length;
        int users = 1;

        Span(long start, long length) {
            this.start = start;
            this.length = length;
        }

        boolean covers(long from, long to) {
            return start <= from && start + length >= to;
        }
    }

    private final String owner;
    private final Iommu iommu;
    private final TreeMap<Long, Span> spans = new TreeMap<>();

    UserMappings(String owner, Iommu iommu) {
        this.owner = owner;
        this.iommu = iommu;
    }

    /** Makes {@code [address, address + length)} reachable by the device, mapping its pages unless they are. */
    void map(long address, long length) {
        if (length <= 0) {
            return;
        }
        long start = address & -PAGE;
        long end = (address + length + PAGE - 1) & -PAGE;
        Map.Entry<Long, Span> below = spans.floorEntry(end - 1);
        if (below != null && below.getValue().start + below.getValue().length > start) {
            Span s = below.getValue();
            if (s.covers(start, end)) {
                s.users++;
                return;
            }
            throw new IllegalArgumentException(String.format("%s: memory 0x%x+%d shares pages with memory mapped "
                    + "before (0x%x+%d) but is not inside it: register the larger region first", owner, address, length,
                    s.start, s.length));
        }
        if (iommu.translates(address) && iommu.translates(address + length - 1)) {
            return; // the function's own DMA memory
        }
        iommu.map(start, end - start);
        spans.put(start, new Span(start, end - start));
    }

    /** Undoes one {@link #map} of the same range; the span is unmapped when its last user goes. */
    void unmap(long address, long length) {
        if (length <= 0) {
            return;
        }
        Map.Entry<Long, Span> e = spans.floorEntry(address);
        if (e != null && e.getValue().covers(address, address + length)) {
            Span s = e.getValue();
            if (--s.users == 0) {
                spans.remove(s.start);
                iommu.unmap(s.start, s.length);
            }
            return;
        }
        if (!iommu.translates(address)) {
            throw new IllegalArgumentException(String.format("%s: memory 0x%x+%d was not mapped for the device", owner,
                    address, length));
        }
    }

    /** Unmaps every span, whatever its users (the function closes); the first failure is thrown after all ran. */
    void unmapAll() {
        RuntimeException failure = null;
        for (Span s : spans.values()) {
            try {
                iommu.unmap(s.start, s.length);
            } catch (RuntimeException e) {
                if (failure == null) {
                    failure = e;
                } else {
                    failure.addSuppressed(e);
                }
            }
        }
        spans.clear();
        if (failure != null) {
            throw failure;
        }
    }

    /** Spans mapped now. */
    int size() {
        return spans.size();
    }
}
