package io.jhca.vfio;

/**
 * The kernel ABI this library speaks: VFIO ioctl numbers, flags and struct layouts from linux/vfio.h (Linux 6.1
 * uapi; x86-64, every field native-endian), plus the few libc constants around them. VfioAbiGoldenTest compiles
 * a C program against the system's linux/vfio.h and checks every value here against it.
 *
 * <p>VFIO ioctls are {@code _IO(';', 100 + n)}: no size or direction bits, so the numbers are the same on every
 * architecture.
 */
public final class VfioAbi {

    private VfioAbi() {
    }

    // ---- ioctl numbers: _IO(VFIO_TYPE ';' = 0x3b, VFIO_BASE 100 + n)
    public static final int VFIO_GET_API_VERSION = 0x3b64;
    public static final int VFIO_CHECK_EXTENSION = 0x3b65;
    public static final int VFIO_SET_IOMMU = 0x3b66;
    public static final int VFIO_GROUP_GET_STATUS = 0x3b67;
    public static final int VFIO_GROUP_SET_CONTAINER = 0x3b68;
    public static final int VFIO_GROUP_UNSET_CONTAINER = 0x3b69;
    public static final int VFIO_GROUP_GET_DEVICE_FD = 0x3b6a;
    public static final int VFIO_DEVICE_GET_INFO = 0x3b6b;
    public static final int VFIO_DEVICE_GET_REGION_INFO = 0x3b6c;
    public static final int VFIO_DEVICE_GET_IRQ_INFO = 0x3b6d;
    public static final int VFIO_DEVICE_SET_IRQS = 0x3b6e;
    public static final int VFIO_DEVICE_RESET = 0x3b6f;
    public static final int VFIO_IOMMU_GET_INFO = 0x3b70;
    public static final int VFIO_IOMMU_MAP_DMA = 0x3b71;
    public static final int VFIO_IOMMU_UNMAP_DMA = 0x3b72;

    // ---- container
    public static final int VFIO_API_VERSION = 0;
    public static final int VFIO_TYPE1_IOMMU = 1;
    public static final int VFIO_TYPE1v2_IOMMU = 3;
    public static final int VFIO_NOIOMMU_IOMMU = 8;

    // ---- group
    public static final int VFIO_GROUP_FLAGS_VIABLE = 1;
    public static final int VFIO_GROUP_FLAGS_CONTAINER_SET = 1 << 1;
    public static final int GROUP_STATUS_SIZE = 8;
    public static final int GROUP_STATUS_FLAGS = 4;

    // ---- struct vfio_info_cap_header {u16 id; u16 version; u32 next}
    public static final int CAP_HEADER_ID = 0;
    public static final int CAP_HEADER_VERSION = 2;
    public static final int CAP_HEADER_NEXT = 4;
    public static final int CAP_HEADER_SIZE = 8;

    // ---- struct vfio_device_info
    public static final int DEVICE_INFO_SIZE = 20;
    public static final int DEVICE_INFO_FLAGS = 4;
    public static final int DEVICE_INFO_NUM_REGIONS = 8;
    public static final int DEVICE_INFO_NUM_IRQS = 12;
    public static final int DEVICE_INFO_CAP_OFFSET = 16;
    public static final int VFIO_DEVICE_FLAGS_RESET = 1;
    public static final int VFIO_DEVICE_FLAGS_PCI = 1 << 1;
    public static final int VFIO_DEVICE_FLAGS_CAPS = 1 << 7;

    // ---- struct vfio_region_info
    public static final int REGION_INFO_SIZE = 32;
    public static final int REGION_INFO_FLAGS = 4;
    public static final int REGION_INFO_INDEX = 8;
    public static final int REGION_INFO_CAP_OFFSET = 12;
    public static final int REGION_INFO_REGION_SIZE = 16;
    public static final int REGION_INFO_OFFSET = 24;
    public static final int VFIO_REGION_INFO_FLAG_READ = 1;
    public static final int VFIO_REGION_INFO_FLAG_WRITE = 1 << 1;
    public static final int VFIO_REGION_INFO_FLAG_MMAP = 1 << 2;
    public static final int VFIO_REGION_INFO_FLAG_CAPS = 1 << 3;
    public static final int VFIO_REGION_INFO_CAP_SPARSE_MMAP = 1;
    public static final int VFIO_REGION_INFO_CAP_TYPE = 2;
    public static final int VFIO_REGION_INFO_CAP_MSIX_MAPPABLE = 3;
    /** struct vfio_region_info_cap_sparse_mmap: header, u32 nr_areas, u32 reserved, areas[] of {u64 offset, u64 size}. */
    public static final int SPARSE_MMAP_NR_AREAS = 8;
    public static final int SPARSE_MMAP_AREAS = 16;
    public static final int SPARSE_MMAP_AREA_SIZE = 16;

    // ---- PCI region and IRQ indexes (enum in linux/vfio.h)
    public static final int VFIO_PCI_BAR0_REGION_INDEX = 0;
    public static final int VFIO_PCI_BAR5_REGION_INDEX = 5;
    public static final int VFIO_PCI_ROM_REGION_INDEX = 6;
    public static final int VFIO_PCI_CONFIG_REGION_INDEX = 7;
    public static final int VFIO_PCI_INTX_IRQ_INDEX = 0;
    public static final int VFIO_PCI_MSI_IRQ_INDEX = 1;
    public static final int VFIO_PCI_MSIX_IRQ_INDEX = 2;
    public static final int VFIO_PCI_ERR_IRQ_INDEX = 3;
    public static final int VFIO_PCI_REQ_IRQ_INDEX = 4;

    // ---- struct vfio_irq_info
    public static final int IRQ_INFO_SIZE = 16;
    public static final int IRQ_INFO_FLAGS = 4;
    public static final int IRQ_INFO_INDEX = 8;
    public static final int IRQ_INFO_COUNT = 12;
    public static final int VFIO_IRQ_INFO_EVENTFD = 1;
    public static final int VFIO_IRQ_INFO_MASKABLE = 1 << 1;
    public static final int VFIO_IRQ_INFO_AUTOMASKED = 1 << 2;
    public static final int VFIO_IRQ_INFO_NORESIZE = 1 << 3;

    // ---- struct vfio_irq_set {argsz, flags, index, start, count, u8 data[]}
    public static final int IRQ_SET_SIZE = 20;
    public static final int IRQ_SET_FLAGS = 4;
    public static final int IRQ_SET_INDEX = 8;
    public static final int IRQ_SET_START = 12;
    public static final int IRQ_SET_COUNT = 16;
    public static final int IRQ_SET_DATA = 20;
    public static final int VFIO_IRQ_SET_DATA_NONE = 1;
    public static final int VFIO_IRQ_SET_DATA_BOOL = 1 << 1;
    public static final int VFIO_IRQ_SET_DATA_EVENTFD = 1 << 2;
    public static final int VFIO_IRQ_SET_ACTION_MASK = 1 << 3;
    public static final int VFIO_IRQ_SET_ACTION_UNMASK = 1 << 4;
    public static final int VFIO_IRQ_SET_ACTION_TRIGGER = 1 << 5;

    // ---- struct vfio_iommu_type1_info
    public static final int IOMMU_INFO_SIZE = 24;
    public static final int IOMMU_INFO_FLAGS = 4;
    public static final int IOMMU_INFO_PGSIZES = 8;
    public static final int IOMMU_INFO_CAP_OFFSET = 16;
    public static final int VFIO_IOMMU_INFO_PGSIZES = 1;
    public static final int VFIO_IOMMU_INFO_CAPS = 1 << 1;
    public static final int VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE = 1;
    public static final int VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL = 3;
    /** struct vfio_iommu_type1_info_cap_iova_range: header, u32 nr_iovas, u32 reserved, {u64 start, u64 end}[]. */
    public static final int IOVA_RANGE_NR_IOVAS = 8;
    public static final int IOVA_RANGE_RANGES = 16;
    public static final int IOVA_RANGE_SIZE = 16;
    /** struct vfio_iommu_type1_info_dma_avail: header, u32 avail. */
    public static final int DMA_AVAIL_AVAIL = 8;

    // ---- struct vfio_iommu_type1_dma_map / dma_unmap
    public static final int DMA_MAP_SIZE = 32;
    public static final int DMA_MAP_FLAGS = 4;
    public static final int DMA_MAP_VADDR = 8;
    public static final int DMA_MAP_IOVA = 16;
    public static final int DMA_MAP_MAP_SIZE = 24;
    public static final int VFIO_DMA_MAP_FLAG_READ = 1;
    public static final int VFIO_DMA_MAP_FLAG_WRITE = 1 << 1;
    public static final int DMA_UNMAP_SIZE = 24;
    public static final int DMA_UNMAP_FLAGS = 4;
    public static final int DMA_UNMAP_IOVA = 8;
    public static final int DMA_UNMAP_UNMAP_SIZE = 16;

    // ---- libc / asm-generic (fcntl.h, mman-common.h, sys/eventfd.h, poll.h)
    public static final int O_RDWR = 02;
    public static final int O_CLOEXEC = 02000000;
    public static final int O_NONBLOCK = 04000;
    public static final int PROT_READ = 1;
    public static final int PROT_WRITE = 2;
    public static final int MAP_SHARED = 1;
    public static final int EFD_NONBLOCK = 04000;
    public static final int EFD_CLOEXEC = 02000000;
    public static final short POLLIN = 1;
    public static final int POLLFD_SIZE = 8;

    // ---- PCI configuration space (PCI Local Bus 3.0 §6.2; linux/pci_regs.h)
    public static final int PCI_COMMAND = 0x04;
    public static final int PCI_COMMAND_MEMORY = 0x2;
    public static final int PCI_COMMAND_MASTER = 0x4;
    public static final int PCI_COMMAND_INTX_DISABLE = 0x400;
}
