package io.jhca.pci;

/**
 * One PCI function as sysfs shows it: address, vendor and device ids, the 24-bit class code
 * (class, subclass, programming interface), the bound driver (null when none), the IOMMU group (-1 when the
 * kernel has no IOMMU) and the NUMA node (-1 when unknown).
 */
public record PciFunction(PciAddress address, int vendor, int device, int classCode, String driver, int iommuGroup,
                          int numaNode) {

    /** Class and subclass, the 16-bit value lspci -nn prints in brackets (e.g. 0x0200 for Ethernet). */
    public int classId() {
        return classCode >>> 8;
    }

    /** Whether {@code driver} is bound. */
    public boolean boundTo(final String name) {
        return name.equals(driver);
    }

    /** A PCI-to-PCI bridge (class 0x0604), which the kernel lets share a viable group whatever its driver. */
    public boolean bridge() {
        return classId() == 0x0604;
    }

    /**
     * One line in the style of {@code lspci -nn} plus driver, group and node:
     * {@code 0000:00:03.0 Ethernet controller [0200]: 15b3:1017 driver=mlx5_core iommu_group=12 numa=0}.
     */
    public String describe() {
        return String.format("%s %s [%04x]: %04x:%04x driver=%s iommu_group=%s numa=%d", address, PciClassNames.name(classCode),
            classId(), vendor, device, driver == null ? "none" : driver, iommuGroup < 0 ? "none" : Integer.toString(iommuGroup),
            numaNode);
    }
}
