/**
 * The vfio backend of the mlx5 driver: ConnectX functions bound to vfio-pci ({@link io.jhca.mlx5.vfio.VfioFunctionSource}),
 * opened through the VFIO library of module jhca-vfio ({@link io.jhca.mlx5.vfio.VfioFunction}): BAR0 from the vfio
 * region, DMA through the IOMMU, MSI-X vector 0 on an eventfd when available. Port addresses and the test mode come
 * from {@link io.jhca.mlx5.vfio.VfioSettings}.
 */
package io.jhca.mlx5.vfio;
