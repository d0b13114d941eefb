package io.jhca.vfio;

/** One VFIO_IOMMU_MAP_DMA mapping of a container: {@code size} bytes at {@code vaddr} seen by devices at {@code iova}. */
public record DmaMapping(long vaddr, long iova, long size) {

    @Override
    public String toString() {
        return "iova 0x" + Long.toHexString(iova) + "+0x" + Long.toHexString(size) + " -> va 0x" + Long.toHexString(vaddr);
    }
}
