package io.jhca.rxe;

import java.util.ArrayList;
import java.util.List;

import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.spi.Provider;

/**
 * The rxe provider: software RoCEv2 devices, one per configured IP address ({@link RxeDeviceConfig#fromEnvironment}:
 * {@code rxe0} on 127.0.0.1 and {@code rxe1} on 127.0.0.2 when nothing is configured). Found by ServiceLoader.
 */
public final class RxeProvider implements Provider {

    public static final String NAME = "rxe";
    /** What ibv_devinfo prints as transport for RoCE devices. */
    static final String TRANSPORT = "InfiniBand";

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public List<DeviceInfo> devices() {
        final List<DeviceInfo> out = new ArrayList<>();
        for (final RxeDeviceConfig c : RxeDeviceConfig.fromEnvironment()) {
            out.add(info(c));
        }
        return out;
    }

    static DeviceInfo info(final RxeDeviceConfig c) {
        return new DeviceInfo(c.name(), NAME, RxeDeviceAttributes.guidOf(c.mac()), TRANSPORT);
    }

    @Override
    public Context open(final DeviceInfo device) {
        for (final RxeDeviceConfig c : RxeDeviceConfig.fromEnvironment()) {
            if (c.name().equals(device.name())) {
                return open(c);
            }
        }
        throw new VerbsException(VerbsException.ENOENT, "no rxe device named '" + device.name() + "' is configured");
    }

    /** Opens a device described in code (tests, tools), whatever the environment configures. */
    public static RxeContext open(final RxeDeviceConfig config) {
        return new RxeContext(config);
    }
}
