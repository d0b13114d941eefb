package io.jhca.lab;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Verbs;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A tool test class's own pair of devices, registered as {@code @RegisterExtension static final DevicesProperty}:
 * before the class, a device property (jhca.rxe.devices, jhca.mlx5.sim) set to addresses no other class uses, the
 * test skipped with the reason if the provider does not list both devices; after it, the property's earlier value
 * given back.
 */
final class DevicesProperty implements BeforeAllCallback, AfterAllCallback {
    private final String property;
    private final String value;
    private final String provider;
    private final String a;
    private final String b;
    private String saved;

    private DevicesProperty(String property, String value, String provider, String a, String b) {
        this.property = property;
        this.value = value;
        this.provider = provider;
        this.a = a;
        this.b = b;
    }

    /** rxe0 and rxe1 of the rxe provider on {@code ip0} and {@code ip1}. */
    static DevicesProperty rxe(String ip0, String ip1) {
        return new DevicesProperty("jhca.rxe.devices", "rxe0=" + ip0 + ",rxe1=" + ip1, "rxe", "rxe0", "rxe1");
    }

    /** mlx5_0 and mlx5_1 of the ConnectX model on {@code ip0} and {@code ip1}. */
    static DevicesProperty model(String ip0, String ip1) {
        return new DevicesProperty("jhca.mlx5.sim", "mlx5_0=" + ip0 + ",mlx5_1=" + ip1, "mlx5", "mlx5_0", "mlx5_1");
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        saved = System.getProperty(property);
        System.setProperty(property, value);
        boolean hasA = false;
        boolean hasB = false;
        for (DeviceInfo d : Verbs.devices()) {
            hasA |= d.name().equals(a) && d.provider().equals(provider);
            hasB |= d.name().equals(b) && d.provider().equals(provider);
        }
        assumeTrue(hasA && hasB, a + "/" + b + " not listed: the " + provider + " provider is not on the class path;"
                + " devices found: " + Verbs.devices());
    }

    @Override
    public void afterAll(ExtensionContext context) {
        if (saved == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, saved);
        }
    }
}
