/* Prints every VFIO ioctl number, flag and struct offset/size io.jhca.vfio.VfioAbi uses, as "NAME VALUE" lines,
 * compiled against the system's linux/vfio.h (Debian: linux-libc-dev). The Java constants must equal these. */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdio.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <linux/pci_regs.h>
#include <linux/vfio.h>

#define V(name, value) printf("%s %lld\n", name, (long long)(value))
#define C(x) V(#x, x)
#define OFF(name, type, field) V(name, offsetof(type, field))

int main(void) {
    C(VFIO_GET_API_VERSION); C(VFIO_CHECK_EXTENSION); C(VFIO_SET_IOMMU); C(VFIO_GROUP_GET_STATUS);
    C(VFIO_GROUP_SET_CONTAINER); C(VFIO_GROUP_UNSET_CONTAINER); C(VFIO_GROUP_GET_DEVICE_FD);
    C(VFIO_DEVICE_GET_INFO); C(VFIO_DEVICE_GET_REGION_INFO); C(VFIO_DEVICE_GET_IRQ_INFO); C(VFIO_DEVICE_SET_IRQS);
    C(VFIO_DEVICE_RESET); C(VFIO_IOMMU_GET_INFO); C(VFIO_IOMMU_MAP_DMA); C(VFIO_IOMMU_UNMAP_DMA);

    C(VFIO_API_VERSION); C(VFIO_TYPE1_IOMMU); C(VFIO_TYPE1v2_IOMMU); C(VFIO_NOIOMMU_IOMMU);

    C(VFIO_GROUP_FLAGS_VIABLE); C(VFIO_GROUP_FLAGS_CONTAINER_SET);
    V("GROUP_STATUS_SIZE", sizeof(struct vfio_group_status));
    OFF("GROUP_STATUS_FLAGS", struct vfio_group_status, flags);

    OFF("CAP_HEADER_ID", struct vfio_info_cap_header, id);
    OFF("CAP_HEADER_VERSION", struct vfio_info_cap_header, version);
    OFF("CAP_HEADER_NEXT", struct vfio_info_cap_header, next);
    V("CAP_HEADER_SIZE", sizeof(struct vfio_info_cap_header));

    V("DEVICE_INFO_SIZE", sizeof(struct vfio_device_info));
    OFF("DEVICE_INFO_FLAGS", struct vfio_device_info, flags);
    OFF("DEVICE_INFO_NUM_REGIONS", struct vfio_device_info, num_regions);
    OFF("DEVICE_INFO_NUM_IRQS", struct vfio_device_info, num_irqs);
    OFF("DEVICE_INFO_CAP_OFFSET", struct vfio_device_info, cap_offset);
    C(VFIO_DEVICE_FLAGS_RESET); C(VFIO_DEVICE_FLAGS_PCI); C(VFIO_DEVICE_FLAGS_CAPS);

    V("REGION_INFO_SIZE", sizeof(struct vfio_region_info));
    OFF("REGION_INFO_FLAGS", struct vfio_region_info, flags);
    OFF("REGION_INFO_INDEX", struct vfio_region_info, index);
    OFF("REGION_INFO_CAP_OFFSET", struct vfio_region_info, cap_offset);
    OFF("REGION_INFO_REGION_SIZE", struct vfio_region_info, size);
    OFF("REGION_INFO_OFFSET", struct vfio_region_info, offset);
    C(VFIO_REGION_INFO_FLAG_READ); C(VFIO_REGION_INFO_FLAG_WRITE); C(VFIO_REGION_INFO_FLAG_MMAP);
    C(VFIO_REGION_INFO_FLAG_CAPS); C(VFIO_REGION_INFO_CAP_SPARSE_MMAP); C(VFIO_REGION_INFO_CAP_TYPE);
    C(VFIO_REGION_INFO_CAP_MSIX_MAPPABLE);
    OFF("SPARSE_MMAP_NR_AREAS", struct vfio_region_info_cap_sparse_mmap, nr_areas);
    OFF("SPARSE_MMAP_AREAS", struct vfio_region_info_cap_sparse_mmap, areas);
    V("SPARSE_MMAP_AREA_SIZE", sizeof(struct vfio_region_sparse_mmap_area));

    C(VFIO_PCI_BAR0_REGION_INDEX); C(VFIO_PCI_BAR5_REGION_INDEX); C(VFIO_PCI_ROM_REGION_INDEX);
    C(VFIO_PCI_CONFIG_REGION_INDEX); C(VFIO_PCI_INTX_IRQ_INDEX); C(VFIO_PCI_MSI_IRQ_INDEX);
    C(VFIO_PCI_MSIX_IRQ_INDEX); C(VFIO_PCI_ERR_IRQ_INDEX); C(VFIO_PCI_REQ_IRQ_INDEX);

    V("IRQ_INFO_SIZE", sizeof(struct vfio_irq_info));
    OFF("IRQ_INFO_FLAGS", struct vfio_irq_info, flags);
    OFF("IRQ_INFO_INDEX", struct vfio_irq_info, index);
    OFF("IRQ_INFO_COUNT", struct vfio_irq_info, count);
    C(VFIO_IRQ_INFO_EVENTFD); C(VFIO_IRQ_INFO_MASKABLE); C(VFIO_IRQ_INFO_AUTOMASKED); C(VFIO_IRQ_INFO_NORESIZE);

    V("IRQ_SET_SIZE", sizeof(struct vfio_irq_set));
    OFF("IRQ_SET_FLAGS", struct vfio_irq_set, flags);
    OFF("IRQ_SET_INDEX", struct vfio_irq_set, index);
    OFF("IRQ_SET_START", struct vfio_irq_set, start);
    OFF("IRQ_SET_COUNT", struct vfio_irq_set, count);
    OFF("IRQ_SET_DATA", struct vfio_irq_set, data);
    C(VFIO_IRQ_SET_DATA_NONE); C(VFIO_IRQ_SET_DATA_BOOL); C(VFIO_IRQ_SET_DATA_EVENTFD);
    C(VFIO_IRQ_SET_ACTION_MASK); C(VFIO_IRQ_SET_ACTION_UNMASK); C(VFIO_IRQ_SET_ACTION_TRIGGER);

    V("IOMMU_INFO_SIZE", sizeof(struct vfio_iommu_type1_info));
    OFF("IOMMU_INFO_FLAGS", struct vfio_iommu_type1_info, flags);
    OFF("IOMMU_INFO_PGSIZES", struct vfio_iommu_type1_info, iova_pgsizes);
    OFF("IOMMU_INFO_CAP_OFFSET", struct vfio_iommu_type1_info, cap_offset);
    C(VFIO_IOMMU_INFO_PGSIZES); C(VFIO_IOMMU_INFO_CAPS);
    C(VFIO_IOMMU_TYPE1_INFO_CAP_IOVA_RANGE); C(VFIO_IOMMU_TYPE1_INFO_DMA_AVAIL);
    OFF("IOVA_RANGE_NR_IOVAS", struct vfio_iommu_type1_info_cap_iova_range, nr_iovas);
    OFF("IOVA_RANGE_RANGES", struct vfio_iommu_type1_info_cap_iova_range, iova_ranges);
    V("IOVA_RANGE_SIZE", sizeof(struct vfio_iova_range));
    OFF("DMA_AVAIL_AVAIL", struct vfio_iommu_type1_info_dma_avail, avail);

    V("DMA_MAP_SIZE", sizeof(struct vfio_iommu_type1_dma_map));
    OFF("DMA_MAP_FLAGS", struct vfio_iommu_type1_dma_map, flags);
    OFF("DMA_MAP_VADDR", struct vfio_iommu_type1_dma_map, vaddr);
    OFF("DMA_MAP_IOVA", struct vfio_iommu_type1_dma_map, iova);
    OFF("DMA_MAP_MAP_SIZE", struct vfio_iommu_type1_dma_map, size);
    C(VFIO_DMA_MAP_FLAG_READ); C(VFIO_DMA_MAP_FLAG_WRITE);
    V("DMA_UNMAP_SIZE", sizeof(struct vfio_iommu_type1_dma_unmap));
    OFF("DMA_UNMAP_FLAGS", struct vfio_iommu_type1_dma_unmap, flags);
    OFF("DMA_UNMAP_IOVA", struct vfio_iommu_type1_dma_unmap, iova);
    OFF("DMA_UNMAP_UNMAP_SIZE", struct vfio_iommu_type1_dma_unmap, size);

    C(O_RDWR); C(O_CLOEXEC); C(O_NONBLOCK); C(PROT_READ); C(PROT_WRITE); C(MAP_SHARED);
    C(EFD_NONBLOCK); C(EFD_CLOEXEC); C(POLLIN); V("POLLFD_SIZE", sizeof(struct pollfd));

    C(PCI_COMMAND); C(PCI_COMMAND_MEMORY); C(PCI_COMMAND_MASTER); C(PCI_COMMAND_INTX_DISABLE);
    return 0;
}
