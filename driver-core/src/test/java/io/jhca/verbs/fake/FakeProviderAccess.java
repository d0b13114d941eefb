package io.jhca.verbs.fake;

import io.jhca.verbs.DeviceAttributes;

/** Lets tests in other packages read the fake device's limits. */
public final class FakeProviderAccess {
    private FakeProviderAccess() {
    }

    public static DeviceAttributes attributes() {
        return FakeContext.ATTRS;
    }
}
