package io.jhca.mlx5.spi;

import java.util.List;

/**
 * Finds ConnectX functions, through {@link java.util.ServiceLoader}: the vfio backend lists devices bound to
 * vfio-pci, the ConnectX model (module jhca-connectx) lists its simulated ones. A source opens a function only when asked,
 * so listing devices never starts hardware or a model.
 */
public interface Mlx5FunctionSource {

    /** Names of the functions present, e.g. ["mlx5_0", "mlx5_1"]. */
    List<String> names();

    /**
     * The function's node GUID if the source knows it without opening the function (sysfs for a PCI device, its
     * configuration for a model), so that device listings show it as ibv_devices does; 0 if unknown until open.
     */
    default long nodeGuid(String name) {
        return 0;
    }

    /** Opens one function by name; each open returns a fresh function (close it when the device closes). */
    Mlx5Function open(String name);
}
