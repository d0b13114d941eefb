package io.jhca.vfio;

import java.util.ArrayList;
import java.util.List;

/** Human-readable lines about an open device as VFIO sees it: container, IOMMU, regions, IRQ indexes. */
public final class VfioReport {

    private static final String[] IRQ_NAMES = {"INTx", "MSI", "MSI-X", "ERR", "REQ"};

    private VfioReport() {
    }

    /** The lines, without indentation. Each region and IRQ index is queried once. */
    public static List<String> describe(final VfioContainer container, final VfioDevice device) {
        final List<String> out = new ArrayList<>();
        final StringBuilder iommu = new StringBuilder("vfio api ").append(container.apiVersion()).append(", iommu ")
            .append(container.iommuType()).append(container.iommuType().unsafe() ? " (UNSAFE: no DMA isolation)" : "");
        if (!container.iommuType().unsafe()) {
            final IommuInfo info = container.iommuInfo();
            iommu.append(", page sizes 0x").append(Long.toHexString(info.pageSizes())).append(", iova ranges ")
                .append(info.ranges()).append(info.rangesReported() ? "" : " (legacy default)")
                .append(", mapping limit ").append(container.mappingLimit());
        }
        out.add(iommu.toString());
        final DeviceInfo d = device.info();
        out.add("device " + device.name() + ": flags 0x" + Integer.toHexString(d.flags()) + (d.pci() ? " pci" : "")
            + (d.resetSupported() ? " reset" : "") + ", " + d.numRegions() + " regions, " + d.numIrqs() + " irq indexes");
        for (int i = 0; i < d.numRegions(); i++) {
            final RegionInfo r = device.regionInfo(i);
            if (r.size() == 0) {
                continue;
            }
            final StringBuilder line = new StringBuilder(String.format("region %d %-6s size 0x%x offset 0x%x %s%s%s", i,
                VfioDevice.regionName(i), r.size(), r.offset(), r.readable() ? "r" : "-", r.writable() ? "w" : "-",
                r.mappable() ? " mmap" : ""));
            for (final Capability c : r.capabilities()) {
                line.append(" cap ").append(c.id() == VfioAbi.VFIO_REGION_INFO_CAP_SPARSE_MMAP ? "sparse-mmap"
                    : c.id() == VfioAbi.VFIO_REGION_INFO_CAP_MSIX_MAPPABLE ? "msix-mappable"
                    : c.id() == VfioAbi.VFIO_REGION_INFO_CAP_TYPE ? "type" : Integer.toString(c.id()));
            }
            for (final RegionInfo.SparseArea a : r.sparseAreas()) {
                line.append(String.format(" [0x%x+0x%x]", a.offset(), a.size()));
            }
            out.add(line.toString());
        }
        for (int i = 0; i < d.numIrqs(); i++) {
            final IrqInfo q = device.irqInfo(i);
            if (q.count() == 0) {
                continue;
            }
            out.add(String.format("irq %d %-5s %d vector(s)%s%s%s", i, i < IRQ_NAMES.length ? IRQ_NAMES[i] : "?",
                q.count(), q.eventfd() ? " eventfd" : "", q.maskable() ? " maskable" : "", q.automasked() ? " automasked" : ""));
        }
        return out;
    }
}
