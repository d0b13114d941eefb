package io.jhca.vfio;

/** The IOMMU model a container is set to (VFIO_SET_IOMMU; values from linux/vfio.h). */
public enum IommuType {
    /** Type1 v2: the only model this library drives a device with, as rdma-core's mlx5_vfio requires. */
    TYPE1V2(VfioAbi.VFIO_TYPE1v2_IOMMU, false),
    /**
     * No IOMMU at all (vfio's {@code enable_unsafe_noiommu_mode}): the device reaches all of memory, MAP_DMA does
     * not exist (ENOTTY) and DMA addresses are physical. Unsafe; used only when asked for explicitly.
     */
    NOIOMMU(VfioAbi.VFIO_NOIOMMU_IOMMU, true);

    private final int value;
    private final boolean unsafe;

    IommuType(final int value, final boolean unsafe) {
        this.value = value;
        this.unsafe = unsafe;
    }

    /** The VFIO_SET_IOMMU / VFIO_CHECK_EXTENSION argument. */
    public int value() {
        return value;
    }

    /** True when the device is not confined: any DMA it makes reaches any physical memory. */
    public boolean unsafe() {
        return unsafe;
    }
}
