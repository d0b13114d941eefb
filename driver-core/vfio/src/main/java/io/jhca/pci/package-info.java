/**
 * PCI functions from sysfs ({@link io.jhca.pci.PciSysfs}: address, ids, class, driver, IOMMU group, NUMA node)
 * and binding them to vfio-pci or back ({@link io.jhca.pci.PciBinder}, as dpdk-devbind and SPDK's setup.sh do),
 * refusing with what is wrong and what to do. The roots (/sys, /dev, /proc) are injectable for fixture trees.
 */
package io.jhca.pci;
