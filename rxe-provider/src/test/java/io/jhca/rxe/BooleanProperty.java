package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.function.Predicate;

/**
 * The check every boolean device property of {@link RxeDeviceConfig} passes: on by default, true or false in any case
 * and spacing, anything else refused with the property and the value named. The property is restored afterwards.
 */
final class BooleanProperty {

    private BooleanProperty() {
    }

    /**
     * @param property the system property
     * @param setting  reads the setting off the first configured device ({@link RxeDeviceConfig#fromEnvironment})
     * @param refused  values that must be refused
     */
    static void check(final String property, final Predicate<RxeDeviceConfig> setting, final String... refused) {
        final String old = System.getProperty(property);
        try {
            System.clearProperty(property);
            assertTrue(first(setting), "on by default");
            for (final String off : new String[] {"false", " FALSE", " False "}) {
                System.setProperty(property, off);
                assertEquals(false, first(setting), "'" + off + "'");
            }
            for (final String on : new String[] {"true", " True "}) {
                System.setProperty(property, on);
                assertEquals(true, first(setting), "'" + on + "'");
            }
            for (final String bad : refused) {
                System.setProperty(property, bad);
                final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> first(setting));
                assertTrue(e.getMessage().contains(property) && e.getMessage().contains("'" + bad + "'"), e.getMessage());
            }
        } finally {
            if (old == null) {
                System.clearProperty(property);
            } else {
                System.setProperty(property, old);
            }
        }
    }

    private static boolean first(final Predicate<RxeDeviceConfig> setting) {
        return setting.test(RxeDeviceConfig.fromEnvironment().get(0));
    }
}
