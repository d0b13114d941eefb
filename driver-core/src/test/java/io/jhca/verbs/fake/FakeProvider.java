package io.jhca.verbs.fake;

import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.spi.Provider;

import java.util.List;

/**
 * A minimal in-test provider: real resource objects with the shared driver-core rules, and queues that only
 * count what was posted. It lets the API rules (lifetimes, limits, WR checks) be tested without any HCA.
 */
public final class FakeProvider implements Provider {
    public static final DeviceInfo DEVICE = new DeviceInfo("fake0", "fake", 0x0002c90300a0b0c0L, "InfiniBand");

    @Override
    public String name() {
        return "fake";
    }

    @Override
    public List<DeviceInfo> devices() {
        return List.of(DEVICE);
    }

    @Override
    public Context open(DeviceInfo device) {
        return new FakeContext(device);
    }
}
