package io.jhca.tests.traffic;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.DevicePairs;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;
import java.util.stream.Stream;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UD SEND and SEND_WITH_IMM at sizes 0, 1, MTU-1 and MTU, posted both ways. The receive buffer starts with the
 * 40-byte GRH area: for RoCEv2 over IPv4 the 20-byte IPv4 header sits at offset 20 (RoCEv2 annex A17.4.5.2, as
 * Linux rxe fills it), and byte_len counts those 40 bytes.
 */
class UdTest {
    private static final int GRH = 40;
    private static final int CANARY = 64;
    private static final byte CANARY_BYTE = 0x3C;

    static Stream<Arguments> cases() {
        return DevicePairs.all().flatMap(p -> Stream.of(WrOpcode.SEND, WrOpcode.SEND_WITH_IMM)
                .flatMap(op -> Stream.of(Style.values()).map(s -> Arguments.of(p, op, s))));
    }

    @ParameterizedTest(name = "{0} {1} {2}")
    @MethodSource("cases")
    void sendWithGrh(DevicePair pair, WrOpcode op, Style style) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.ud().bufferBytes(65536));
            Peer b = h.peerB(PeerSpec.ud().bufferBytes(65536));
            a.readyUd();
            b.readyUd();
            AddressHandle ah = h.track(a.pd().createAh(a.avTo(b)));
            int mtu = h.activeMtu().bytes();
            long wrId = 0;
            for (int size : new int[] {0, 1, mtu - 1, mtu}) {
                wrId++;
                String what = "UD " + op + " of " + size + " bytes (" + style + ")";
                int imm = 0xFEEDF00D + size;
                long seed = size * 7L + op.ordinal();
                UnsafeBuffer bb = b.buf();
                Payloads.set(bb, 0, bb.capacity(), CANARY_BYTE);
                Payloads.fill(a.buf(), 0, size, seed);
                b.postRecv(wrId + 100, 0, GRH + size + CANARY);
                if (style == Style.POST_SEND) {
                    SendWr wr = new SendWr().wrId(wrId).opcode(op).sendFlags(SendFlags.SIGNALED).immData(imm)
                            .ud(ah, b.qpn(), Peer.QKEY);
                    if (size > 0) {
                        wr.sge(a.mr(), 0, size);
                    } else {
                        wr.numSge(0);
                    }
                    a.post(wr);
                } else {
                    SendQueue sq = a.qp().sendQueue().start();
                    sq.wrId(wrId).flags(SendFlags.SIGNALED);
                    if (op == WrOpcode.SEND) {
                        sq.send();
                    } else {
                        sq.sendImm(imm);
                    }
                    sq.udAddr(ah, b.qpn(), Peer.QKEY).sge(a.mr(), 0, size);
                    assertEquals(0, sq.complete());
                }
                Wcs.assertSuccess(h.await(a.sendCq(), what), WcOpcode.SEND, wrId, a.qpn(), what);
                WorkCompletion rwc = h.await(b.recvCq(), "receive of " + what);
                Wcs.assertRecv(rwc, WcOpcode.RECV, wrId + 100, b.qpn(), GRH + size, op == WrOpcode.SEND_WITH_IMM ? imm : null, what);
                assertEquals(Integer.toHexString(a.qpn()), Integer.toHexString(rwc.srcQp()), "src_qp of " + what + ": " + rwc);
                assertTrue((rwc.wcFlags() & WcFlags.GRH) != 0, "GRH flag of " + what + ": " + rwc);
                if (a.gid().isIpv4Mapped()) {
                    checkIpv4Header(bb, a, b, size, op == WrOpcode.SEND_WITH_IMM, what);
                }
                Payloads.assertPayload(bb, GRH, size, seed, what + " payload after the GRH area");
                Payloads.assertFilled(bb, GRH + size, CANARY, CANARY_BYTE, what + " bytes after the message");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void wrongQkeyIsDropped(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.ud());
            Peer b = h.peerB(PeerSpec.ud());
            a.readyUd();
            b.readyUd();
            AddressHandle ah = h.track(a.pd().createAh(a.avTo(b)));
            b.postRecv(7, 0, 4096);
            a.post(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(a.mr(), 0, 16)
                    .ud(ah, b.qpn(), Peer.QKEY + 1));
            // UD is unreliable: the sender completes, the receiver drops a datagram whose Q_Key differs (IBTA 10.2.4).
            Wcs.assertSuccess(h.await(a.sendCq(), "UD send with a wrong Q_Key"), WcOpcode.SEND, 1, a.qpn(), "send");
            h.assertNoCompletion(b.recvCq(), Duration.ofMillis(200), "a datagram with the wrong Q_Key is dropped");
            a.post(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(a.mr(), 0, 16)
                    .ud(ah, b.qpn(), Peer.QKEY));
            Wcs.assertRecv(h.await(b.recvCq(), "the next, right, datagram"), WcOpcode.RECV, 7, b.qpn(), GRH + 16, null, "recv");
        }
    }

    /** Bytes 20..39 of the receive buffer: the IPv4 header of the datagram (all fields big-endian). */
    private static void checkIpv4Header(UnsafeBuffer bb, Peer a, Peer b, int size, boolean imm, String what) {
        int ip = 20;
        assertEquals(0x45, bb.getByte(ip) & 0xff, what + ": IPv4 version 4, IHL 5 at GRH offset 20");
        assertEquals(17, bb.getByte(ip + 9) & 0xff, what + ": IP protocol UDP");
        for (int i = 0; i < 4; i++) {
            assertEquals(a.gid().get(12 + i), bb.getByte(ip + 12 + i), what + ": IPv4 source address byte " + i);
            assertEquals(b.gid().get(12 + i), bb.getByte(ip + 16 + i), what + ": IPv4 destination address byte " + i);
        }
        // IPv4 20 + UDP 8 + BTH 12 + DETH 8 (+ ImmDt 4) + payload + pad + ICRC 4 (rocev2.md section 1.1).
        int pad = -size & 3;
        int total = 20 + 8 + 12 + 8 + (imm ? 4 : 0) + size + pad + 4;
        int gotTotal = ((bb.getByte(ip + 2) & 0xff) << 8) | (bb.getByte(ip + 3) & 0xff);
        assertEquals(total, gotTotal, what + ": IPv4 total length (big-endian at GRH offset 22)");
    }
}
