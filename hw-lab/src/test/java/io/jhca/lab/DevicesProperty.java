package io.jhca.lab;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Verbs;

/**
 * A tool test class's own pair of devices: a device property (jhca.rxe.devices, jhca.mlx5.sim) set for the class
 * to addresses no other class uses, the test skipped with the reason if the provider does not list both, and
 * the property's earlier value given back after the class.
 */
final class DevicesProperty {
    private DevicesProperty() {
    }

    /**
     * Sets {@code property} to {@code value} and assumes {@code provider} lists devices {@code a} and {@code b};
     * returns the property's earlier value, for {@link #restore}.
     */
    static String install(String property, String value, String provider, String a, String b) {
        String saved = System.getProperty(property);
        System.setProperty(property, value);
        boolean hasA = false;
        boolean hasB = false;
        for (DeviceInfo d : Verbs.devices()) {
            hasA |= d.name().equals(a) && d.provider().equals(provider);
            hasB |= d.name().equals(b) && d.provider().equals(provider);
        }
        assumeTrue(hasA && hasB, a + "/" + b + " not listed: the " + provider + " provider is not on the class path;"
                + " devices found: " + Verbs.devices());
        return saved;
    }

    static void restore(String property, String saved) {
        if (saved == null) {
            System.clearProperty(property);
        } else {
            System.setProperty(property, saved);
        }
    }
}
