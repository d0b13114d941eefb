package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

import io.jhca.rxe.link.Link;
import io.jhca.rxe.link.UdpLink;
import io.jhca.rxe.transport.RxeCounters;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpType;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * A datagram the socket does not take (no room in its send buffer: a non-blocking send of 0 bytes) is not lost on
 * UD and UC, where nothing would retransmit it: the engine sends it again, and the WR completes only then (Linux
 * rxe_req.c retries a packet rxe_xmit_packet could not send). Before, the WR completed as sent and the peer never
 * got the message.
 */
class RefusedSendTest {

    private static final int REFUSALS = 3;

    /** A UDP link whose first {@code REFUSALS} sends are refused, as a full socket buffer refuses them. */
    private static RxeDeviceConfig refusing(final String name, final AtomicInteger refused) {
        return Rig.config(name, ProgressMode.THREAD).link(local -> new Link() {
            private final UdpLink inner = UdpLink.open(local, UdpLink.DEFAULT_SOCKET_BUFFER);

            @Override
            public boolean send(final ByteBuffer datagram, final InetSocketAddress peer) {
                if (refused.get() < REFUSALS) {
                    refused.incrementAndGet();
                    return false;
                }
                return inner.send(datagram, peer);
            }

            @Override
            public InetSocketAddress receive(final ByteBuffer buffer) {
                return inner.receive(buffer);
            }

            @Override
            public InetSocketAddress localAddress() {
                return inner.localAddress();
            }

            @Override
            public void close() {
                inner.close();
            }
        }).build();
    }

    @Test
    void aRefusedUdDatagramIsSentAgainNotLost() {
        AtomicInteger refused = new AtomicInteger();
        try (Rig r = new Rig(refusing("refUdA", refused), Rig.config("refUdB", ProgressMode.THREAD).build(), QpType.UD,
                1 << 16, Mtu.MTU_1024, UnaryOperator.identity());
             AddressHandle ah = r.pdA.createAh(AhAttributes.to(Rig.gid(r.b)).sgidIndex(1))) {
            DatagramAndUcTest.udUp(r.qpA);
            DatagramAndUcTest.udUp(r.qpB);
            TrafficTest.fill(r.memA.buffer(), 0, 500, 21);
            r.qpB.postRecv(new RecvWr().wrId(70).sge(r.mrB, 0, 2048));
            r.qpA.postSend(new SendWr().wrId(7).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 500)
                    .ud(ah, r.qpB.qpn(), DatagramAndUcTest.QKEY));
            r.expect(r.cqA, 7, WcStatus.SUCCESS);
            assertEquals(40 + 500, r.expect(r.cqB, 70, WcStatus.SUCCESS).byteLen(), "the datagram arrived");
            TrafficTest.check(r.memB.buffer(), 40, 500, 21);
            assertEquals(REFUSALS, refused.get());
            assertEquals(REFUSALS, r.a.counters().get(RxeCounters.Counter.TX_REFUSED));
            assertEquals(1, r.a.counters().get(RxeCounters.Counter.SENT_PKTS), "sent once, when the link took it");
        }
    }

    @Test
    void aRefusedUcPacketIsSentAgainNotLost() {
        AtomicInteger refused = new AtomicInteger();
        try (Rig r = new Rig(refusing("refUcA", refused), Rig.config("refUcB", ProgressMode.THREAD).build(), QpType.UC,
                1 << 16, Mtu.MTU_1024, UnaryOperator.identity())) {
            TrafficTest.fill(r.memA.buffer(), 0, 3000, 22);   // three packets at MTU 1024
            r.qpB.postRecv(new RecvWr().wrId(80).sge(r.mrB, 0, 4096));
            r.qpA.postSend(new SendWr().wrId(8).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 3000));
            r.expect(r.cqA, 8, WcStatus.SUCCESS);
            assertEquals(3000, r.expect(r.cqB, 80, WcStatus.SUCCESS).byteLen(), "every packet of the message arrived");
            TrafficTest.check(r.memB.buffer(), 0, 3000, 22);
            assertEquals(REFUSALS, r.a.counters().get(RxeCounters.Counter.TX_REFUSED));
        }
    }
}
