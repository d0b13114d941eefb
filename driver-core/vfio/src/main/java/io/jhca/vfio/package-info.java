/**
 * A VFIO library: drive a PCI function bound to vfio-pci from user space, through jnr-ffi (no JNI).
 *
 * <ul>
 *   <li>{@link io.jhca.vfio.VfioContainer}: {@code /dev/vfio/vfio}, the IOMMU (Type1v2, or the unsafe
 *       no-IOMMU mode when asked for), DMA mapping and the {@link io.jhca.vfio.IovaAllocator}.</li>
 *   <li>{@link io.jhca.vfio.VfioGroup}: {@code /dev/vfio/N}, viability, attaching to the container.</li>
 *   <li>{@link io.jhca.vfio.VfioDevice}: info, regions with their capability chains, BARs as
 *       {@link io.jhca.vfio.BarMapping}s (the project's MMIO windows), configuration space, bus mastering,
 *       reset, interrupts as {@link io.jhca.vfio.VfioInterrupt} eventfds.</li>
 *   <li>{@link io.jhca.vfio.VfioIova}: the memory module's IOVA translation for memory behind a container,
 *       "allocated" or "physical" (IOVA = physical address).</li>
 * </ul>
 *
 * <p>A check program, in outline (EduCheckExample in the tests is the full one):
 * <pre>{@code
 * PciSysfs sysfs = PciSysfs.system();
 * PciFunction fn = sysfs.find(0x1234, 0x11e8).get(0);
 * new PciBinder(sysfs).bind(fn.address(), PciBinder.VFIO_PCI);
 * try (VfioContainer container = VfioContainer.open(); VfioDevice device = container.openDevice(fn)) {
 *     BarMapping bar0 = device.mapBar(0);
 *     int id = bar0.read32(0);
 *     device.enableBusMaster();
 *     DmaRegion mem = container.allocate(DmaOptions.of(4096));   // mapped with VFIO_IOMMU_MAP_DMA
 *     long iova = mem.iova(0);                                    // what the device is given
 *     VfioInterrupt msi = device.enableInterrupt(VfioAbi.VFIO_PCI_MSI_IRQ_INDEX, 0);
 *     long fired = msi.await(1000);                               // 0 on timeout
 *     mem.close();
 * }
 * }</pre>
 *
 * <p>Failures are {@link io.jhca.vfio.VfioException}s naming the device, the call and errno. Closing a container
 * closes its groups and devices, their BAR mappings and interrupt eventfds, and unmaps all DMA; nothing is left
 * behind on any failure path, and anything used after close throws.
 */
package io.jhca.vfio;
