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
import io.jhca.rxe.transport.RxeCounters;
import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.rxe.wire.Ipv4IdMode;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpType;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * {@link RxeDeviceConfig#twin}: a device elsewhere that moves packets as the original does (the settings on its data
 * path carried over, coalesced pairs only where the original sends them), without the original's faults or capture;
 * made like Linux rxe, its packets' ICRCs claim a non-zero IPv4 ID, which its peer's receiver solves for.
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

        assertEquals(0, offLoopback.twin("rxe8-warm0", at).icrcIdBias(), "packets as jhca's: ID 0");
        assertEquals(0, offLoopback.twin("rxe8-warm0", at, false).icrcIdBias());
        assertEquals(RxeDeviceConfig.TWIN_ICRC_ID_BIAS, offLoopback.twin("rxe8-warm0", at, true).icrcIdBias());
        assertEquals(0, real.twin("rxe7-warm0", at, true).icrcIdBias(), "a strict receiver would drop them");
        assertEquals(0, offLoopback.icrcIdBias(), "never on a device of its own");
    }

    /**
     * RDMA WRITEs both ways, the ACK and the next request in one datagram, between two twins of a device: made like
     * Linux rxe, every packet each receives passes its ICRC check by solving for the ID and none in full; made as jhca
     * sends them, the other way round. Over coalesced pairs (loopback) and over sendmmsg pairs alike.
     */
    @Test
    void twinsLikeLinuxRxeMakeTheirPeersSolveForTheId() throws Exception {
        for (boolean gso : new boolean[] {true, false}) {
            RxeDeviceConfig real = Rig.config("rxe6", ProgressMode.CALLER).gso(gso).build();
            for (boolean likeLinuxRxe : new boolean[] {true, false}) {
                String what = (likeLinuxRxe ? "like Linux rxe" : "as jhca") + (gso ? ", GSO pairs" : ", sendmmsg pairs");
                try (Rig r = new Rig(real.twin("rxe6-warm0", InetAddress.getByName(Rig.nextAddress()), likeLinuxRxe),
                        real.twin("rxe6-warm1", InetAddress.getByName(Rig.nextAddress()), likeLinuxRxe), QpType.RC,
                        4096, Mtu.MTU_1024, i -> i)) {
                    for (int i = 0; i < 20; i++) {
                        r.qpA.postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                                .sge(r.mrA, 0, 64).rdma(r.mrB.address() + 64, r.mrB.rkey()));
                        r.expect(r.cqA, i, WcStatus.SUCCESS);
                        r.qpB.postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                                .sge(r.mrB, 0, 64).rdma(r.mrA.address() + 64, r.mrA.rkey()));
                        r.expect(r.cqB, i, WcStatus.SUCCESS);
                    }
                    for (RxeCounters c : new RxeCounters[] {r.a.counters(), r.b.counters()}) {
                        long full = c.get(Counter.ICRC_CHECKED_FULL);
                        long recovered = c.get(Counter.ICRC_RECOVERED_ID);
                        assertTrue((likeLinuxRxe ? recovered : full) >= 20, what + ": " + c);
                        assertEquals(0, likeLinuxRxe ? full : recovered, what + ": " + c);
                        assertEquals(0, c.get(Counter.DROP_BAD_ICRC), what + ": " + c);
                    }
                }
            }
        }
    }
}
