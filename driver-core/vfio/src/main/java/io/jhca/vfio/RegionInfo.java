package io.jhca.vfio;

import java.util.List;

/**
 * VFIO_DEVICE_GET_REGION_INFO of one region (BAR0-5 are indexes 0-5, the ROM 6, config space 7): flags, size,
 * its offset in the device fd (for pread/pwrite/mmap), and its capability chain, with the sparse-mmap areas
 * decoded (the parts of a BAR that may be mmapped when not all of it may, e.g. around an MSI-X table).
 */
public record RegionInfo(int index, int flags, long size, long offset, List<Capability> capabilities,
                         List<SparseArea> sparseAreas) {

    /** One mmappable area of a region with the sparse-mmap capability. */
    public record SparseArea(long offset, long size) {
    }

    public RegionInfo {
        capabilities = List.copyOf(capabilities);
        sparseAreas = List.copyOf(sparseAreas);
    }

    public boolean readable() {
        return (flags & VfioAbi.VFIO_REGION_INFO_FLAG_READ) != 0;
    }

    public boolean writable() {
        return (flags & VfioAbi.VFIO_REGION_INFO_FLAG_WRITE) != 0;
    }

    public boolean mappable() {
        return (flags & VfioAbi.VFIO_REGION_INFO_FLAG_MMAP) != 0;
    }

    /** The capability with {@code id}, or null. */
    public Capability capability(final int id) {
        for (final Capability c : capabilities) {
            if (c.id() == id) {
                return c;
            }
        }
        return null;
    }
}
