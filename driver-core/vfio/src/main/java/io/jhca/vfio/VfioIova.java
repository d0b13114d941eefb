package io.jhca.vfio;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.LongUnaryOperator;

import io.jhca.memory.IovaTranslator;

/**
 * The memory module's IOVA translation for memory behind a {@link VfioContainer}: {@link io.jhca.memory.DmaMemory}
 * calls {@link #map} for each new region, which makes it reachable by the container's devices with
 * VFIO_IOMMU_MAP_DMA; {@link #toIova} translates inside mapped regions; {@link #unmap} undoes the mapping
 * when the region closes. Two policies:
 * <ul>
 *   <li>{@link Policy#ALLOCATED}: one IOVA block per region from the container's {@link IovaAllocator},
 *       aligned to the region's size up to 2 MiB; one mapping per region.</li>
 *   <li>{@link Policy#PHYSICAL}: IOVA = the physical address of each page; one mapping per physically
 *       contiguous run (per 2 MiB huge page at least). In no-IOMMU mode nothing is mapped.</li>
 * </ul>
 * Once the container is closed its mappings are gone: {@link #toIova} throws and {@link #unmap} does nothing,
 * so regions can still be closed. Thread-safe (the container's lock).
 */
public final class VfioIova implements IovaTranslator {

    /** How IOVAs are chosen. */
    public enum Policy { ALLOCATED, PHYSICAL }

    /** Granule of the physical policy's page walk: the base page of /proc/self/pagemap. */
    static final long BASE_PAGE = 4096;

    /** One IOVA-contiguous piece of a region. */
    private record Run(long va, long length, long iova, DmaMapping mapping) {
    }

    private final VfioContainer container;
    private final Policy policy;
    private final LongUnaryOperator physical;
    /** Runs by virtual address. */
    private final TreeMap<Long, Run> runs = new TreeMap<>();
    private boolean containerClosed;

    VfioIova(final VfioContainer container, final Policy policy, final LongUnaryOperator physical) {
        this.container = container;
        this.policy = policy;
        this.physical = physical;
    }

    public Policy policy() {
        return policy;
    }

    @Override
    public long toIova(final long virtualAddress) {
        synchronized (container) {
            if (containerClosed) {
                throw VfioException.refused(VfioContainer.NAME, "IOVA translation", "the container is closed, its DMA"
                    + " mappings are gone");
            }
            final Map.Entry<Long, Run> e = runs.floorEntry(virtualAddress);
            if (e == null || virtualAddress - e.getKey() >= e.getValue().length()) {
                throw new IllegalArgumentException("address 0x" + Long.toHexString(virtualAddress)
                    + " is not in memory mapped through this container");
            }
            return e.getValue().iova() + (virtualAddress - e.getKey());
        }
    }

    @Override
    public String name() {
        return policy == Policy.ALLOCATED ? "vfio" : "vfio-physical";
    }

    @Override
    public void map(final long virtualAddress, final long length) {
        if (length <= 0) {
            throw new IllegalArgumentException("DMA mapping length " + length);
        }
        synchronized (container) {
            container.ensureOpen("VFIO_IOMMU_MAP_DMA");
            final Map.Entry<Long, Run> below = runs.floorEntry(virtualAddress + length - 1);
            if (below != null && below.getKey() + below.getValue().length() > virtualAddress) {
                throw new IllegalArgumentException("0x" + Long.toHexString(virtualAddress) + "+" + length
                    + " overlaps memory already mapped: " + below.getValue().mapping());
            }
            if (policy == Policy.ALLOCATED) {
                mapAllocated(virtualAddress, length);
            } else {
                mapPhysical(virtualAddress, length);
            }
        }
    }

    private void mapAllocated(final long va, final long length) {
        final DmaMapping m = container.mapDma(va, length);
        runs.put(va, new Run(va, length, m.iova(), m));
    }

    private void mapPhysical(final long va, final long length) {
        if ((va & (BASE_PAGE - 1)) != 0 || (length & (BASE_PAGE - 1)) != 0) {
            throw new IllegalArgumentException("physical IOVAs need page-aligned memory: 0x" + Long.toHexString(va)
                + "+" + length);
        }
        final List<long[]> pieces = physicalRuns(va, length);
        final boolean noIommu = container.isNoIommu();
        if (!noIommu) {
            container.checkRoom(pieces.size());
        }
        final List<Run> done = new ArrayList<>();
        try {
            for (final long[] p : pieces) {
                final DmaMapping m = noIommu ? null : container.mapDma(p[0], p[2], p[1]);
                done.add(new Run(p[0], p[1], p[2], m));
            }
        } catch (final RuntimeException | Error e) {
            for (final Run r : done) {
                Cleanup.run(null, () -> unmapRun(r));
            }
            throw e;
        }
        for (final Run r : done) {
            runs.put(r.va(), r);
        }
    }

    /** {va, length, physical} for each physically contiguous run of the range, walking base pages. */
    private List<long[]> physicalRuns(final long va, final long length) {
        final List<long[]> out = new ArrayList<>();
        long runVa = va;
        long runPa = physical.applyAsLong(va);
        long runLen = BASE_PAGE;
        for (long off = BASE_PAGE; off < length; off += BASE_PAGE) {
            final long pa = physical.applyAsLong(va + off);
            if (pa == runPa + runLen) {
                runLen += BASE_PAGE;
            } else {
                out.add(new long[] {runVa, runLen, runPa});
                runVa = va + off;
                runPa = pa;
                runLen = BASE_PAGE;
            }
        }
        out.add(new long[] {runVa, runLen, runPa});
        return out;
    }

    @Override
    public void unmap(final long virtualAddress, final long length) {
        synchronized (container) {
            if (containerClosed) {
                return; // the container unmapped everything when it closed
            }
            RuntimeException failure = null;
            for (final Run r : new ArrayList<>(runs.subMap(virtualAddress, true, virtualAddress + length - 1, true).values())) {
                runs.remove(r.va());
                failure = Cleanup.run(failure, () -> unmapRun(r));
            }
            if (failure != null) {
                throw failure;
            }
        }
    }

    private void unmapRun(final Run r) {
        if (r.mapping() == null) {
            return;
        }
        container.unmapDma(r.mapping());
    }

    /** Mappings this translator holds now. */
    public int mappingCount() {
        synchronized (container) {
            return runs.size();
        }
    }

    void containerClosed() {
        containerClosed = true;
        runs.clear();
    }

    @Override
    public String toString() {
        return name();
    }
}
