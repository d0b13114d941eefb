package io.jhca.verbs.fake;

import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceAttributes;

/** Lets tests in other packages read the fake device's limits and step into its provider calls. */
public final class FakeProviderAccess {
    private FakeProviderAccess() {
    }

    public static DeviceAttributes attributes() {
        return FakeContext.ATTRS;
    }

    /** Runs {@code r} inside the provider's next QP or CQ creation on {@code ctx}, a fake device's context. */
    public static void beforeNextCreate(Context ctx, Runnable r) {
        ((FakeContext) ctx).beforeNextCreate = r;
    }
}
