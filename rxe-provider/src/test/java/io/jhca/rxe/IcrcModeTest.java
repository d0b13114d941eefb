package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.rxe.transport.RxeCounters;
import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.rxe.wire.Ipv4IdMode;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpType;

/**
 * The IPv4 ICRC modes on a live device: {@code auto} (the default) checks all 32 bits of an ID-0 packet and
 * solves for any other ID, counting the two apart; {@code strict} takes ID 0 only.
 */
class IcrcModeTest {

    /** Sends a packet to an unknown QPN (validated, then dropped) with an ICRC for {@code id}; waits for it. */
    private static void inject(final Rig r, final Forger f, final int id, final Counter expected) throws Exception {
        final RxeCounters c = r.b.counters();
        final long before = c.get(expected);
        f.ipv4Id = id;
        f.sendOnly(0xABCDE, 0, 32);
        r.await(() -> c.get(expected) > before, expected + " counted for IPv4 ID " + id);
    }

    private static Rig rig(final Ipv4IdMode mode) {
        return new Rig(Rig.config("icrcA", ProgressMode.CALLER).build(),
                Rig.config("icrcB", ProgressMode.CALLER).icrcMode(mode).build(), QpType.RC, 4096, Mtu.MTU_1024,
                i -> i);
    }

    @Test
    void autoChecksIdZeroInFullAndRecoversOtherIds() throws Exception {
        assertEquals(Ipv4IdMode.AUTO, Rig.config("x", ProgressMode.CALLER).build().icrcMode(), "the default");
        try (Rig r = rig(Ipv4IdMode.AUTO); Forger f = new Forger(r.a, r.b)) {
            final RxeCounters c = r.b.counters();
            inject(r, f, 0, Counter.ICRC_CHECKED_FULL);
            assertEquals(0, c.get(Counter.ICRC_RECOVERED_ID));
            inject(r, f, 0x1234, Counter.ICRC_RECOVERED_ID);
            inject(r, f, 0xFFFF, Counter.ICRC_RECOVERED_ID);
            assertEquals(2, c.get(Counter.ICRC_RECOVERED_ID));
            assertEquals(3, c.get(Counter.DROP_UNKNOWN_QPN), "all three passed the ICRC check");
            assertEquals(0, c.get(Counter.DROP_BAD_ICRC));
        }
    }

    @Test
    void strictTakesIdZeroOnly() throws Exception {
        try (Rig r = rig(Ipv4IdMode.STRICT_ID_ZERO); Forger f = new Forger(r.a, r.b)) {
            final RxeCounters c = r.b.counters();
            inject(r, f, 0, Counter.ICRC_CHECKED_FULL);
            inject(r, f, 0x1234, Counter.DROP_BAD_ICRC);
            assertEquals(0, c.get(Counter.ICRC_RECOVERED_ID));
            assertEquals(1, c.get(Counter.DROP_UNKNOWN_QPN));
        }
    }

    @Test
    void propertyNamesTheModes() {
        final String old = System.getProperty(RxeDeviceConfig.ICRC_PROPERTY);
        try {
            System.clearProperty(RxeDeviceConfig.ICRC_PROPERTY);
            assertEquals(Ipv4IdMode.AUTO, only());
            for (final String[] v : new String[][] {{"auto", "AUTO"}, {"strict", "STRICT_ID_ZERO"},
                    {" Recover ", "RECOVER_ID"}}) {
                System.setProperty(RxeDeviceConfig.ICRC_PROPERTY, v[0]);
                assertEquals(Ipv4IdMode.valueOf(v[1]), only());
            }
            System.setProperty(RxeDeviceConfig.ICRC_PROPERTY, "loose");
            final IllegalArgumentException e = assertThrows(IllegalArgumentException.class, IcrcModeTest::only);
            assertTrue(e.getMessage().contains("auto, strict or recover"), e.getMessage());
        } finally {
            if (old == null) {
                System.clearProperty(RxeDeviceConfig.ICRC_PROPERTY);
            } else {
                System.setProperty(RxeDeviceConfig.ICRC_PROPERTY, old);
            }
        }
    }

    private static Ipv4IdMode only() {
        final List<RxeDeviceConfig> all = RxeDeviceConfig.fromEnvironment();
        return all.get(0).icrcMode();
    }
}
