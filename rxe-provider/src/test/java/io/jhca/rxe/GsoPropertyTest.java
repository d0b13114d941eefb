package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

/**
 * {@value RxeDeviceConfig#GSO_PROPERTY}: on by default, true or false in any case and spacing, anything else refused.
 */
class GsoPropertyTest {

    @Test
    void propertyTurnsCoalescedPairsOnAndOff() {
        final String old = System.getProperty(RxeDeviceConfig.GSO_PROPERTY);
        try {
            System.clearProperty(RxeDeviceConfig.GSO_PROPERTY);
            assertTrue(only(), "on by default");
            System.setProperty(RxeDeviceConfig.GSO_PROPERTY, "false");
            assertEquals(false, only());
            System.setProperty(RxeDeviceConfig.GSO_PROPERTY, " True ");
            assertEquals(true, only());
            System.setProperty(RxeDeviceConfig.GSO_PROPERTY, "off");
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, GsoPropertyTest::only);
            assertTrue(e.getMessage().contains(RxeDeviceConfig.GSO_PROPERTY) && e.getMessage().contains("'off'"),
                    e.getMessage());
        } finally {
            if (old == null) {
                System.clearProperty(RxeDeviceConfig.GSO_PROPERTY);
            } else {
                System.setProperty(RxeDeviceConfig.GSO_PROPERTY, old);
            }
        }
    }

    @Test
    void aBuiltDeviceCoalescesUnlessToldNot() {
        assertTrue(RxeDeviceConfig.builder("g0").address("127.0.0.1").build().gso());
        assertEquals(false, RxeDeviceConfig.builder("g1").address("127.0.0.1").gso(false).build().gso());
    }

    private static boolean only() {
        final List<RxeDeviceConfig> all = RxeDeviceConfig.fromEnvironment();
        return all.get(0).gso();
    }
}
