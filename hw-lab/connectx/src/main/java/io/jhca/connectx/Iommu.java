package io.jhca.connectx;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;

/**
 * The model's IOMMU: the only memory the simulated device may touch is memory the driver made reachable, i.e.
 * regions from {@link ModelFunction#allocateDma} and regions passed to {@link ModelFunction#mapForDevice} in process,
 * or, for a model in its own process ({@link ModelProcess}), the machine's RAM file as fixed windows. Every IOVA
 * the driver hands the device (command queue, mailboxes, firmware pages, PAS lists, doorbell records, MTTs) is
 * resolved here; an IOVA outside every mapping is a DMA fault, never a raw access.
 *
 * <p>A region is entered as runs of IOVA-contiguous pages (one run for identity IOVAs). Mapping is visible at once
 * from any thread (the driver may ring a doorbell right after allocating); unmapping is done by the model's
 * firmware thread only, after the objects that cached translations into the range were stopped
 * ({@link ConnectXModel#unmap}).
 */
final class Iommu implements DeviceDma {

    /** One IOVA-contiguous run of a mapped region. */
    record Entry(long iova, long length, long host, DmaRegion region) {
        long end() {
            return iova + length;
        }
    }

    private final ConcurrentSkipListMap<Long, Entry> entries = new ConcurrentSkipListMap<>();

    /** Enters every page of {@code region}; refuses a range that overlaps a mapping already present. */
    synchronized void map(DmaRegion region) {
        List<Entry> runs = runsOf(region);
        for (Entry e : runs) {
            Map.Entry<Long, Entry> below = entries.floorEntry(e.end() - 1);
            if (below != null && below.getValue().end() > e.iova()) {
                throw new IllegalArgumentException(String.format(
                        "IOVA range [0x%x, 0x%x) is already mapped", e.iova(), e.end()));
            }
        }
        for (Entry e : runs) {
            entries.put(e.iova(), e);
        }
    }

    /**
     * Enters a fixed window: {@code [iova, iova + length)} is {@code host}'s memory for as long as the device lives
     * (a machine's RAM file, IOVA = guest-physical address). Overlaps are refused as for {@link #map}.
     */
    synchronized void mapWindow(long iova, long length, long host) {
        if (length <= 0 || iova < 0 || iova + length < iova) {
            throw new IllegalArgumentException(String.format("bad IOVA window 0x%x + %d", iova, length));
        }
        Entry e = new Entry(iova, length, host, null);
        Map.Entry<Long, Entry> below = entries.floorEntry(e.end() - 1);
        if (below != null && below.getValue().end() > iova) {
            throw new IllegalArgumentException(String.format("IOVA range [0x%x, 0x%x) is already mapped", iova, e.end()));
        }
        entries.put(iova, e);
    }

    /** Removes every run of {@code region}; returns them (empty if it was not mapped). */
    synchronized List<Entry> unmap(DmaRegion region) {
        List<Entry> removed = new ArrayList<>();
        entries.values().removeIf(e -> {
            if (e.region() == region) {
                removed.add(e);
                return true;
            }
            return false;
        });
        return removed;
    }

    boolean isMapped(DmaRegion region) {
        for (Entry e : entries.values()) {
            if (e.region() == region) {
                return true;
            }
        }
        return false;
    }

    /** The host address of {@code [iova, iova + length)}, or -1 if any part of it is not mapped (a DMA fault). */
    long hostAddress(long iova, long length) {
        if (length < 0 || iova + length < iova) {
            return -1;
        }
        Map.Entry<Long, Entry> f = entries.floorEntry(iova);
        if (f == null) {
            return -1;
        }
        Entry e = f.getValue();
        long off = iova - e.iova();
        if (off + length > e.length()) {
            return -1;
        }
        return e.host() + off;
    }

    boolean contains(long iova, long length) {
        return hostAddress(iova, length) >= 0;
    }

    @Override
    public boolean wrap(UnsafeBuffer view, long iova, int length) {
        long host = hostAddress(iova, length);
        if (host < 0) {
            return false;
        }
        view.wrap(host, length);
        return true;
    }

    private static List<Entry> runsOf(DmaRegion region) {
        List<Entry> out = new ArrayList<>();
        long len = region.length();
        if (len == 0) {
            return out;
        }
        long page = Math.max(4096, region.pageSize());
        long start = 0;
        long startIova = region.iova(0);
        long off = Math.min(page - (region.address() & (page - 1)), len);
        while (off < len) {
            if (region.iova(off) != startIova + (off - start)) {
                out.add(new Entry(startIova, off - start, region.address() + start, region));
                start = off;
                startIova = region.iova(off);
            }
            off = Math.min(off + page, len);
        }
        if (len > start) {
            out.add(new Entry(startIova, len - start, region.address() + start, region));
        }
        return out;
    }
}
