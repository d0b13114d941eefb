package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/**
 * {@value RxeDeviceConfig#GSO_PROPERTY}: on by default, true or false in any case and spacing, anything else refused.
 */
class GsoPropertyTest {

    @Test
    void propertyTurnsCoalescedPairsOnAndOff() {
        BooleanProperty.check(RxeDeviceConfig.GSO_PROPERTY, RxeDeviceConfig::gso, "off", "1");
    }

    @Test
    void aBuiltDeviceCoalescesUnlessToldNot() {
        assertTrue(RxeDeviceConfig.builder("g0").address("127.0.0.1").build().gso());
        assertEquals(false, RxeDeviceConfig.builder("g1").address("127.0.0.1").gso(false).build().gso());
    }
}
