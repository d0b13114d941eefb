package io.jhca.rxe;

import static java.nio.ByteOrder.BIG_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.Map;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.rxe.transport.RxeCounters;
import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.rxe.wire.Bth;
import io.jhca.rxe.wire.Icrc;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.PacketLayout;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * Packets injected into a device through a plain UDP socket: each malformed or misaddressed one is dropped and
 * counted under its reason, and the device keeps working.
 */
class MalformedPacketTest {

    private final UnsafeBuffer pkt = new UnsafeBuffer(ByteBuffer.allocateDirect(32 * 1024));
    private final Icrc icrc = new Icrc();

    @Test
    void eachMalformedPacketIsDroppedAndCounted() throws Exception {
        try (Rig r = Rig.rc(ProgressMode.THREAD, 1 << 16, Mtu.MTU_1024);
             DatagramChannel raw = DatagramChannel.open(java.net.StandardProtocolFamily.INET);
             QueuePair idle = r.pdB.createQp(QpInitAttributes.rc(r.cqB, r.cqB))) {
            idle.modify(QpAttributes.toInit(1));
            final InetAddress rawAddress = InetAddress.getByName(Rig.nextAddress());
            raw.bind(new InetSocketAddress(rawAddress, 0));
            final InetSocketAddress device = new InetSocketAddress(r.b.config().address(), 4791);
            final int src = DatagramAndUcTest.ipv4FromAddress(rawAddress);
            final int dst = DatagramAndUcTest.ipv4(r.b);
            final int srcPort = ((InetSocketAddress) raw.getLocalAddress()).getPort();
            final int qpn = r.qpB.qpn();
            final RxeCounters c = r.b.counters();

            inject(raw, device, c, Counter.DROP_TRUNCATED, 8);
            int n = sendOnly(qpn, 0);
            pkt.putByte(0, (byte) 0x1E); // reserved RC opcode
            inject(raw, device, c, Counter.DROP_UNKNOWN_OPCODE, n);
            n = sendOnly(qpn, 16);
            pkt.putByte(1, (byte) (pkt.getByte(1) | 1)); // TVer 1
            finish(src, dst, srcPort, n);
            inject(raw, device, c, Counter.DROP_BAD_TVER, n);
            n = sendOnly(qpn, 16);
            pkt.putShort(2, (short) 0x1234, BIG_ENDIAN);
            finish(src, dst, srcPort, n);
            inject(raw, device, c, Counter.DROP_BAD_PKEY, n);
            n = sendOnly(qpn, 16);
            finish(src, dst, srcPort, n);
            pkt.putByte(n - 1, (byte) (pkt.getByte(n - 1) ^ 0x40));
            inject(raw, device, c, Counter.DROP_BAD_ICRC, n);
            n = sendOnly(0, 16);
            finish(src, dst, srcPort, n);
            inject(raw, device, c, Counter.DROP_QP0, n);
            n = sendOnly(0xABCDE, 16);
            finish(src, dst, srcPort, n);
            inject(raw, device, c, Counter.DROP_UNKNOWN_QPN, n);
            inject(raw, device, c, Counter.DROP_OVERSIZE, 20_000);
            // an ACK carrying payload
            new Bth().wrap(pkt, 0).set(Opcode.RC_ACKNOWLEDGE, false, 0, Bth.DEFAULT_PKEY, qpn, false, 5);
            pkt.putInt(12, 0x1F000000, BIG_ENDIAN);
            finish(src, dst, srcPort, 12 + 4 + 8 + 4);
            inject(raw, device, c, Counter.DROP_BAD_LENGTH, 12 + 4 + 8 + 4);
            // well formed, but not from the QP's peer address
            n = sendOnly(qpn, 16);
            finish(src, dst, srcPort, n);
            inject(raw, device, c, Counter.DROP_BAD_SRC_ADDR, n);
            // a UD opcode to an RC QP
            new Bth().wrap(pkt, 0).set(Opcode.UD_SEND_ONLY, false, 0, Bth.DEFAULT_PKEY, qpn, false, 5);
            finish(src, dst, srcPort, 12 + 8 + 4);
            inject(raw, device, c, Counter.DROP_BAD_QP_TYPE, 12 + 8 + 4);
            // a QP in INIT takes no requests
            n = sendOnly(idle.qpn(), 16);
            finish(src, dst, srcPort, n);
            inject(raw, device, c, Counter.DROP_BAD_QP_STATE, n);

            // the device still works
            r.qpB.postRecv(new RecvWr().wrId(9).sge(r.mrB, 0, 64));
            r.qpA.postSend(new SendWr().wrId(8).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 64));
            r.expect(r.cqA, 8, WcStatus.SUCCESS);
            r.expect(r.cqB, 9, WcStatus.SUCCESS);
        }
    }

    /** RC SEND_ONLY with {@code payload} bytes, ICRC not yet written; returns the UDP payload length. */
    private int sendOnly(final int destQp, final int payload) {
        pkt.setMemory(0, 64 + payload, (byte) 0);
        new Bth().wrap(pkt, 0).set(Opcode.RC_SEND_ONLY, false, Bth.padFor(payload), Bth.DEFAULT_PKEY, destQp, true, 0x2000);
        return 12 + payload + Bth.padFor(payload) + 4;
    }

    /** Writes the correct ICRC for a datagram of {@code length} bytes (IPv4 ID 0, DF, as jhca sends). */
    private void finish(final int src, final int dst, final int srcPort, final int length) {
        final int roce = length - 4;
        Icrc.put(pkt, roce, icrc.computeIpv4(src, dst, 0, PacketLayout.IPV4_DF, srcPort, 4791, pkt, 0, roce));
    }

    private void inject(final DatagramChannel raw, final InetSocketAddress device, final RxeCounters c,
            final Counter expected, final int length) throws Exception {
        final Map<String, Long> before = c.snapshot();
        final ByteBuffer bb = pkt.byteBuffer().duplicate();
        bb.clear().limit(length);
        raw.send(bb, device);
        final long end = System.nanoTime() + 5_000_000_000L;
        while (c.get(expected) == before.get(expected.label())) {
            assertTrue(System.nanoTime() < end, () -> expected + " not counted: " + c);
            Thread.onSpinWait();
        }
        final Map<String, Long> after = c.snapshot();
        for (final Map.Entry<String, Long> e : after.entrySet()) {
            final long delta = e.getValue() - before.get(e.getKey());
            final boolean counts = e.getKey().equals(expected.label()) || e.getKey().equals("rcvd_pkts");
            if (e.getKey().equals(Counter.RCVD_BYTES.label())) {
                // an oversize datagram counts what fits the receive buffer (16 KiB: more than any valid packet)
                assertEquals(Math.min(length, 16 * 1024), delta, "rcvd_bytes");
                continue;
            }
            if (e.getKey().equals(Counter.ICRC_CHECKED_FULL.label())) {
                // counted for every packet whose ICRC passed (it is checked before the QP is looked up)
                assertTrue(delta == 0 || delta == 1, () -> "icrc_checked_full went up by " + delta);
                continue;
            }
            assertEquals(counts ? 1 : 0, delta, () -> e.getKey() + " after injecting a packet for " + expected);
        }
    }
}
