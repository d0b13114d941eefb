package io.jhca.vfio;

import java.util.List;

/**
 * What VFIO_IOMMU_GET_INFO reports for a container: the supported IOMMU page sizes (a bitmap, bit n = 2^n
 * bytes), the usable IOVA ranges (capability IOVA_RANGE; the legacy x86 ranges when the kernel gives none) and
 * how many more DMA mappings the container allows (capability DMA_AVAIL; -1 when not reported).
 */
public record IommuInfo(long pageSizes, List<IovaRange> ranges, boolean rangesReported, int dmaAvailable) {

    /**
     * rdma-core's fallback when the kernel reports no IOVA ranges (providers/mlx5/mlx5_vfio.c): everything from
     * 64 KiB below 4 GiB except the x86 MSI window 0xFEE00000-0xFEEFFFFF, and above it up to 2^39 - 1.
     */
    public static final List<IovaRange> LEGACY_RANGES = List.of(
        new IovaRange(0x10000L, 0xFEDFFFFFL), new IovaRange(0xFEF00000L, (1L << 39) - 1));

    public IommuInfo {
        ranges = List.copyOf(ranges);
    }

    /** The smallest IOMMU page size, the granule of every mapping (4 KiB when none is reported). */
    public long minPageSize() {
        return pageSizes == 0 ? 4096 : Long.lowestOneBit(pageSizes);
    }
}
