package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.file.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.jhca.rxe.link.LinkFaults;
import io.jhca.rxe.wire.Ipv4IdMode;

/**
 * {@link RxeDeviceConfig#twin}: a device elsewhere that moves packets as the original does (the settings on its data
 * path carried over, coalesced pairs only where the original sends them), without the original's faults or capture.
 */
@Timeout(10)
class DeviceTwinTest {

    @Test
    void carriesTheDataPathSettingsAndNothingElse() throws Exception {
        InetAddress at = InetAddress.getByName("127.99.1.1");
        RxeDeviceConfig real = RxeDeviceConfig.builder("rxe7").address("127.0.0.7").progressMode(ProgressMode.CALLER)
                .idleStrategy("busy").icrcMode(Ipv4IdMode.STRICT_ID_ZERO).socketBuffer(1 << 20).ackHoldNanos(123_000)
                .pollProgress(false).txFaults(LinkFaults.NONE.withDrop(0.5)).pcap(Path.of("x.pcap")).build();
        RxeDeviceConfig twin = real.twin("rxe7-warm0", at);
        assertEquals("rxe7-warm0", twin.name());
        assertEquals(at, twin.address());
        assertEquals(ProgressMode.CALLER, twin.progressMode());
        assertEquals("busy", twin.idleStrategyName());
        assertEquals(Ipv4IdMode.STRICT_ID_ZERO, twin.icrcMode());
        assertEquals(1 << 20, twin.socketBuffer());
        assertEquals(123_000, twin.ackHoldNanos());
        assertFalse(twin.pollProgress());
        assertTrue(twin.gso(), "the original is on loopback, where pairs leave coalesced");
        assertTrue(real.hasFaults());
        assertFalse(twin.hasFaults(), "no faults");
        assertNull(twin.pcap(), "no capture");
        assertNull(twin.netdev());

        RxeDeviceConfig offLoopback = RxeDeviceConfig.builder("rxe8").address("10.88.0.1").build();
        assertTrue(offLoopback.gso(), "on by default");
        assertFalse(offLoopback.twin("rxe8-warm0", at).gso(), "a device off loopback sends pairs by sendmmsg: so does its twin");
        RxeDeviceConfig noGso = RxeDeviceConfig.builder("rxe9").address("127.0.0.9").gso(false).build();
        assertFalse(noGso.twin("rxe9-warm0", at).gso());
    }
}
