package io.jhca.memory;

/**
 * Turns a process virtual address into the address a device uses for DMA (the IOVA).
 *
 * <ul>
 *   <li>{@link IdentityIova}: iova == va. Software providers (rxe) and devices behind the kernel's own
 *       memory registration (the mlx5 dv backend, where the kernel maps the pages) use it.</li>
 *   <li>{@link PagemapIova}: the physical address, from /proc/self/pagemap. For a device that DMAs with
 *       physical addresses and no IOMMU translation; needs root.</li>
 *   <li>A vfio container (driver-core, {@code io.jhca.pci}): the device sits behind an IOMMU and sees only
 *       what the container mapped. That implementation picks an IOVA range for each region in
 *       {@link #map(long, long)} and maps it with {@code VFIO_IOMMU_MAP_DMA} ({vaddr, iova, size},
 *       READ|WRITE) on the container fd, unmaps it with {@code VFIO_IOMMU_UNMAP_DMA} in
 *       {@link #unmap(long, long)}, and translates with iova = regionIova + (va - regionVa).
 *       It lives next to the container, not here.</li>
 * </ul>
 *
 * <p>Translations of pinned memory are stable for the life of the region; implementations must still not
 * answer from a cache that could outlive a mapping. Calls happen on the control path (memory registration,
 * queue creation) and may come from any thread.
 */
public interface IovaTranslator {

    /** The IOVA of the byte at {@code virtualAddress}, which lies in a region this translator has mapped. */
    long toIova(long virtualAddress);

    /** Short name for logs and error messages ("identity", "pagemap", "vfio"). */
    String name();

    /**
     * Makes {@code [virtualAddress, virtualAddress + length)} reachable by the device. {@link DmaMemory} calls it
     * once per region, after the pages are locked and before the region is handed out; a failure here unmaps
     * the region. Identity and pagemap translation need nothing, hence the empty default; the vfio container
     * does its {@code VFIO_IOMMU_MAP_DMA} here.
     */
    default void map(final long virtualAddress, final long length) {
    }

    /** Undoes {@link #map(long, long)}; called on close, before the memory is unlocked and unmapped. */
    default void unmap(final long virtualAddress, final long length) {
    }
}
