package io.jhca.verbs.spi;

import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;

import java.util.List;

/**
 * A provider of devices, found with {@link java.util.ServiceLoader}: a jar lists its implementation in
 * {@code META-INF/services/io.jhca.verbs.spi.Provider}. A provider lists the devices it can drive and opens
 * them; its {@link Context} subclass and the resources it creates inherit the shared rules of driver-core.
 */
public interface Provider {

    /** Short name, e.g. "rxe" or "mlx5". */
    String name();

    /** The devices present now (may be empty: no hardware, no configuration). */
    List<DeviceInfo> devices();

    /** Opens one of this provider's devices. */
    Context open(DeviceInfo device);
}
