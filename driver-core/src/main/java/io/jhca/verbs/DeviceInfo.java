package io.jhca.verbs;

/**
 * A device as listed by {@link Verbs#devices()}: what ibv_get_device_list and ibv_devices show.
 *
 * @param name      the device name, e.g. "rxe0" or "mlx5_0"
 * @param provider  the provider that drives it, e.g. "rxe" or "mlx5"
 * @param nodeGuid  the node GUID (host order value; printed as %016x)
 * @param transport what the device is, e.g. "InfiniBand" (ibv_devinfo prints transport InfiniBand (0) for RoCE too)
 */
public record DeviceInfo(String name, String provider, long nodeGuid, String transport) {
}
