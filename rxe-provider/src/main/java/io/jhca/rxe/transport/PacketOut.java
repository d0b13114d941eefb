package io.jhca.rxe.transport;

import java.nio.ByteBuffer;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.rxe.link.Link;
import io.jhca.rxe.wire.Aeth;
import io.jhca.rxe.wire.AtomicAckEth;
import io.jhca.rxe.wire.AtomicEth;
import io.jhca.rxe.wire.Bth;
import io.jhca.rxe.wire.Deth;
import io.jhca.rxe.wire.Icrc;
import io.jhca.rxe.wire.ImmDt;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.PacketLayout;
import io.jhca.rxe.wire.Reth;

/**
 * The engine's one transmit buffer and the header flyweights over it. A packet is built in place: {@link #begin}
 * writes the BTH, the extension-header accessors wrap their flyweight at the opcode's offset, the payload is
 * copied to {@link #payloadIndex()}, and {@link #send} zeroes the pad, appends the ICRC (little-endian) and hands
 * the UDP payload to the link. Nothing is allocated.
 *
 * <p>ICRC over IPv4 is computed for the IPv4 header the kernel will write: Identification 0 and DF (the link's
 * socket sends with IP_PMTUDISC_DO, see UdpLink), total length 20 + 8 + UDP payload, protocol 17; the UDP source
 * port is the link's own port. Over IPv6 every covered field is known.
 */
final class PacketOut {

    /** Largest packet built: BTH + the longest header set (rxe RXE_MAX_HDR_LENGTH 80) + 4096 payload + pad + ICRC. */
    static final int CAPACITY = 8192;

    private final ByteBuffer byteBuffer = ByteBuffer.allocateDirect(CAPACITY);
    final UnsafeBuffer buffer = new UnsafeBuffer(byteBuffer);
    final Bth bth = new Bth();
    private final Reth reth = new Reth();
    private final Aeth aeth = new Aeth();
    private final AtomicEth atomicEth = new AtomicEth();
    private final AtomicAckEth atomicAckEth = new AtomicAckEth();
    private final ImmDt immDt = new ImmDt();
    private final Deth deth = new Deth();
    private final Icrc icrc = new Icrc();
    private final Link link;
    /** The link's local addresses, by index (a peer's via() picks the source). */
    private final Peer[] locals;
    private final RxeCounters counters;
    private Tracer tracer;
    /** The counters of the QP the engine is working for (null: none), so its packets count there too. */
    private RxeCounters owner;
    private int opcode;
    private int payloadLength;

    PacketOut(final Link link, final Peer[] locals, final RxeCounters counters) {
        this.link = link;
        this.locals = locals;
        this.counters = counters;
    }

    void tracer(final Tracer t) {
        this.tracer = t;
    }

    /** Engine: the QP whose packets follow (null between QPs). */
    void owner(final RxeCounters qpCounters) {
        this.owner = qpCounters;
    }

    /** Starts a packet with its BTH (P_Key 0xFFFF, TVer 0, MigReq 0, as rxe sends); returns the payload index. */
    int begin(final int opcode, final boolean se, final int payloadLength, final int destQp, final boolean ackReq,
            final int psn) {
        this.opcode = opcode;
        this.payloadLength = payloadLength;
        bth.wrap(buffer, 0).set(opcode, se, Bth.padFor(payloadLength), Bth.DEFAULT_PKEY, destQp, ackReq, psn);
        return Opcode.payloadOffset(opcode);
    }

    int payloadIndex() {
        return Opcode.payloadOffset(opcode);
    }

    Reth reth() {
        return reth.wrap(buffer, Opcode.rethOffset(opcode));
    }

    Aeth aeth() {
        return aeth.wrap(buffer, Opcode.aethOffset(opcode));
    }

    AtomicEth atomicEth() {
        return atomicEth.wrap(buffer, Opcode.atomicEthOffset(opcode));
    }

    AtomicAckEth atomicAckEth() {
        return atomicAckEth.wrap(buffer, Opcode.atomicAckEthOffset(opcode));
    }

    ImmDt immDt() {
        return immDt.wrap(buffer, Opcode.immDtOffset(opcode));
    }

    /** The IETH (IBTA 5.2.10): the R_Key the responder invalidates, big-endian. */
    void ieth(final int rkey) {
        buffer.putInt(Opcode.iethOffset(opcode), rkey, java.nio.ByteOrder.BIG_ENDIAN);
    }

    Deth deth() {
        return deth.wrap(buffer, Opcode.dethOffset(opcode));
    }

    /**
     * Pads, computes the ICRC and sends to {@code peer} from the local address it names ({@link Peer#via()});
     * false if the link refused the datagram.
     */
    boolean send(final Peer peer) {
        final int via = peer.via();
        if (via >= locals.length) {
            counters.increment(RxeCounters.Counter.TX_REFUSED); // checked when the AV was set; never expected
            return false;
        }
        final Peer local = locals[via];
        final int payloadEnd = Opcode.payloadOffset(opcode) + payloadLength;
        final int pad = Bth.padFor(payloadLength);
        for (int i = 0; i < pad; i++) {
            buffer.putByte(payloadEnd + i, (byte) 0); // pad bytes are zero (rxe_req.c finish_packet)
        }
        final int roceLength = payloadEnd + pad;
        final int udpSrcPort = local.socketAddress().getPort();
        final int value;
        if (local.isIpv4()) {
            value = icrc.computeIpv4(local.ipv4Address(), peer.ipv4Address(), 0, PacketLayout.IPV4_DF, udpSrcPort,
                    peer.socketAddress().getPort(), buffer, 0, roceLength);
        } else {
            value = icrc.computeIpv6(local.hi(), local.lo(), peer.hi(), peer.lo(), udpSrcPort,
                    peer.socketAddress().getPort(), buffer, 0, roceLength);
        }
        Icrc.put(buffer, roceLength, value); // little-endian on the wire
        final int length = roceLength + Icrc.LENGTH;
        byteBuffer.limit(length).position(0);
        if (tracer != null) {
            tracer.trace(local, peer, udpSrcPort, peer.socketAddress().getPort(), buffer, 0, length, 0);
        }
        final boolean sent = link.send(byteBuffer, peer.socketAddress(), via);
        counters.increment(sent ? RxeCounters.Counter.SENT_PKTS : RxeCounters.Counter.TX_REFUSED);
        if (sent) {
            counters.add(RxeCounters.Counter.SENT_BYTES, length);
            if (owner != null) {
                owner.increment(RxeCounters.Counter.SENT_PKTS);
                owner.add(RxeCounters.Counter.SENT_BYTES, length);
            }
        }
        return sent;
    }
}
