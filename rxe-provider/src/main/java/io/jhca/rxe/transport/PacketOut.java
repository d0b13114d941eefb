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
 * <p>Within an engine's pass ({@link #bursts}), RC packets to one peer on a link that sends bursts
 * ({@link Link#maxBurst}, a loopback socket) are laid end to end in a burst buffer and leave as one GSO datagram
 * when the pass ends or the next packet cannot join: a 64 KiB RDMA WRITE at a 4 KiB MTU then takes 6 trips through
 * the kernel instead of 16. Only RC's: a lost burst is recovered as any lost packet is, by the requester's
 * retransmission, where UC and UD resend what the link refused. Packets leave in the order they were built.
 *
 * <p>ICRC over IPv4 is computed for the IPv4 header the kernel will write: Identification 0 and DF (the link's
 * socket sends with IP_PMTUDISC_DO, see UdpLink), total length 20 + 8 + UDP payload, protocol 17; the UDP source
 * port is the link's own port. Over IPv6 every covered field is known.
 */
final class PacketOut {

    /** An ACK's length on the wire: BTH, AETH, ICRC. */
    static final int ACK_LENGTH = wireLength(Opcode.RC_ACKNOWLEDGE, 0);

    /** Largest packet built: BTH + the longest header set (rxe RXE_MAX_HDR_LENGTH 80) + 4096 payload + pad + ICRC. */
    static final int CAPACITY = 8192;

    private final ByteBuffer byteBuffer = ByteBuffer.allocateDirect(CAPACITY);
    final UnsafeBuffer buffer = new UnsafeBuffer(byteBuffer);
    /** A held ACK's own buffer: it is built while the request that releases it sits in {@link #buffer}. */
    private final ByteBuffer ackByteBuffer = ByteBuffer.allocateDirect(64);
    private final UnsafeBuffer ackBuffer = new UnsafeBuffer(ackByteBuffer);
    private final Bth ackBth = new Bth();
    private final Aeth ackAeth = new Aeth();
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

    /** Bytes a burst buffer holds: more than any link's {@link Link#maxBurst}, which bounds each burst. */
    static final int BURST_CAPACITY = 16 * 1024;
    private final ByteBuffer burstBytes = ByteBuffer.allocateDirect(BURST_CAPACITY);
    private final UnsafeBuffer burst = new UnsafeBuffer(burstBytes);
    /** Whether RC packets may wait in the burst buffer for the pass's end ({@link #bursts}). */
    private boolean bursting;
    /**
     * The burst's peer, segment size (its first packet's length), bytes and packets: every packet but the last is
     * {@code burstSegment} long, so the lengths follow from these.
     */
    private Peer burstPeer;
    private int burstSegment;
    private int burstLength;
    private int burstCount;
    /** The QP counters each packet counts in, for when the burst leaves. */
    private final RxeCounters[] burstOwners = new RxeCounters[Link.MAX_BURST_SEGMENTS];

    /** Added to the IPv4 Identification of every ICRC this side computes ({@link Engine#icrcIdBias}). */
    private int icrcIdBias;

    void icrcIdBias(final int bias) {
        this.icrcIdBias = bias & 0xFFFF;
    }

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
        final Peer local = local(peer);
        if (local == null) {
            return false;
        }
        if (bursting && Opcode.transport(opcode) == Opcode.TRANSPORT_RC) {
            final int length = wireLength(opcode, payloadLength);
            final int max = link.maxBurst(peer.via());
            if (length <= max) {
                if (burstCount > 0 && !joins(peer, length, max)) {
                    flush();
                }
                // segment i of a burst leaves with IPv4 ID i when split (Link#sendBurst)
                seal(buffer, byteBuffer, opcode, payloadLength, local, peer, burstCount);
                burst.putBytes(burstLength, buffer, 0, length);
                if (burstCount == 0) {
                    burstPeer = peer;
                    burstSegment = length;
                }
                burstOwners[burstCount] = owner;
                burstCount++;
                burstLength += length;
                return true;   // handed over: a burst the kernel refuses is lost as a datagram would be
            }
        }
        flush();
        seal(buffer, byteBuffer, opcode, payloadLength, local, peer, 0);
        final boolean sent = link.send(byteBuffer, peer.socketAddress(), peer.via());
        count(sent, byteBuffer.limit(), owner);
        return sent;
    }

    /** Whether a packet of {@code length} bytes to {@code peer} may join the burst waiting (not empty). */
    private boolean joins(final Peer peer, final int length, final int max) {
        // GSO: only the last segment may be shorter, so a burst that took a shorter one is closed
        return burstLength == burstCount * burstSegment && burstCount < Link.MAX_BURST_SEGMENTS
                && length <= burstSegment && burstLength + length <= max && burstPeer.via() == peer.via()
                && (burstPeer == peer || burstPeer.socketAddress().equals(peer.socketAddress()));
    }

    /**
     * Engine: whether RC packets may wait in the burst buffer from now on; when turned off, the waiting burst leaves.
     * On for a transmit or receive pass, off before the engine looks for more work or sleeps.
     */
    void bursts(final boolean on) {
        if (!on) {
            flush();
        }
        bursting = on;
    }

    /** Sends the waiting burst, if any: one packet as a datagram of its own, more as one GSO datagram. */
    void flush() {
        final int n = burstCount;
        if (n == 0) {
            return;
        }
        burstBytes.limit(burstLength).position(0);
        final boolean sent = n == 1
                ? link.send(burstBytes, burstPeer.socketAddress(), burstPeer.via())
                : link.sendBurst(burstBytes, burstSegment, burstPeer.socketAddress(), burstPeer.via());
        for (int i = 0; i < n; i++) {
            count(sent, i < n - 1 ? burstSegment : burstLength - (n - 1) * burstSegment, burstOwners[i]);
            burstOwners[i] = null;
        }
        burstCount = 0;
        burstLength = 0;
        burstPeer = null;
    }

    /**
     * {@link #send} after an ACK of the request at {@code ackPsn} (AETH syndrome ACK, MSN {@code ackMsn}) to the same
     * destination QP, both handed to the link together, the ACK first: the held ACK a request packet releases
     * ({@link Responder#sendRequest}) leaves in the order an ACK sent at once would have, in one system call. Where
     * the link sends the two as one GSO datagram (a loopback socket, {@link Link#sendsCoalesced}) the request goes
     * first, as GSO needs the longer segment first: both reach the peer's socket at the same moment, in one datagram.
     * Returns whether the request packet was handed to the network (a refused ACK is a lost ACK, which the peer's next
     * ACK or its retransmission recovers).
     */
    boolean sendAfterAck(final Peer peer, final int ackPsn, final int ackMsn) {
        final Peer local = local(peer);
        if (local == null) {
            return false;
        }
        flush();
        final int destQp = bth.destQp();
        ackBth.wrap(ackBuffer, 0).set(Opcode.RC_ACKNOWLEDGE, false, 0, Bth.DEFAULT_PKEY, destQp, false, ackPsn);
        ackAeth.wrap(ackBuffer, Opcode.aethOffset(Opcode.RC_ACKNOWLEDGE)).set(Aeth.SYNDROME_ACK, ackMsn);
        final int length = wireLength(opcode, payloadLength);
        if (link.sendsCoalesced(length, ACK_LENGTH, peer.via())) {
            // one GSO datagram: the request (the longer) first, the ACK as the second segment, IPv4 ID 1 when split
            seal(buffer, byteBuffer, opcode, payloadLength, local, peer, 0);
            seal(ackBuffer, ackByteBuffer, Opcode.RC_ACKNOWLEDGE, 0, local, peer, 1);
            final int sent = link.sendCoalesced(byteBuffer, ackByteBuffer, peer.socketAddress(), peer.via());
            count((sent & Link.FIRST_SENT) != 0, length, owner);
            count((sent & Link.SECOND_SENT) != 0, ACK_LENGTH, owner);
            return (sent & Link.FIRST_SENT) != 0;
        }
        seal(ackBuffer, ackByteBuffer, Opcode.RC_ACKNOWLEDGE, 0, local, peer, 0);
        seal(buffer, byteBuffer, opcode, payloadLength, local, peer, 0);
        final int sent = link.sendPair(ackByteBuffer, byteBuffer, peer.socketAddress(), peer.via());
        count((sent & Link.FIRST_SENT) != 0, ACK_LENGTH, owner);
        count((sent & Link.SECOND_SENT) != 0, length, owner);
        return (sent & Link.SECOND_SENT) != 0;
    }

    /** The local address {@code peer} is reached from, or null (counted) if the device has no such address. */
    private Peer local(final Peer peer) {
        final int via = peer.via();
        if (via >= locals.length) {
            counters.increment(RxeCounters.Counter.TX_REFUSED); // checked when the AV was set; never expected
            return null;
        }
        return locals[via];
    }

    /** The UDP payload's length of a packet of opcode {@code op} with {@code payload} bytes: headers, pad, ICRC. */
    private static int wireLength(final int op, final int payload) {
        return Opcode.payloadOffset(op) + payload + Bth.padFor(payload) + Icrc.LENGTH;
    }

    /**
     * Zeroes the pad after the payload, appends the ICRC (little-endian) for the headers the packet will leave with
     * from {@code local} to {@code peer} with IPv4 Identification {@code ipv4Id} (0 unless it is the second of a
     * coalesced pair), sets {@code bytes} to the whole UDP payload (its {@link #wireLength}) and traces it.
     */
    private void seal(final UnsafeBuffer packet, final ByteBuffer bytes, final int op, final int payload,
            final Peer local, final Peer peer, final int ipv4Id) {
        final int payloadEnd = Opcode.payloadOffset(op) + payload;
        final int pad = Bth.padFor(payload);
        for (int i = 0; i < pad; i++) {
            packet.putByte(payloadEnd + i, (byte) 0); // pad bytes are zero (rxe_req.c finish_packet)
        }
        final int roceLength = payloadEnd + pad;
        final int udpSrcPort = local.socketAddress().getPort();
        final int value;
        if (local.isIpv4()) {
            value = icrc.computeIpv4(local.ipv4Address(), peer.ipv4Address(), (ipv4Id + icrcIdBias) & 0xFFFF,
                    PacketLayout.IPV4_DF, udpSrcPort, peer.socketAddress().getPort(), packet, 0, roceLength);
        } else {
            value = icrc.computeIpv6(local.hi(), local.lo(), peer.hi(), peer.lo(), udpSrcPort,
                    peer.socketAddress().getPort(), packet, 0, roceLength);
        }
        Icrc.put(packet, roceLength, value); // little-endian on the wire
        final int length = roceLength + Icrc.LENGTH;
        bytes.limit(length).position(0);
        if (tracer != null) {
            tracer.trace(local, peer, udpSrcPort, peer.socketAddress().getPort(), packet, 0, length, ipv4Id);
        }
    }

    private void count(final boolean sent, final int length, final RxeCounters qp) {
        counters.increment(sent ? RxeCounters.Counter.SENT_PKTS : RxeCounters.Counter.TX_REFUSED);
        if (sent) {
            counters.add(RxeCounters.Counter.SENT_BYTES, length);
            if (qp != null) {
                qp.increment(RxeCounters.Counter.SENT_PKTS);
                qp.add(RxeCounters.Counter.SENT_BYTES, length);
            }
        }
    }
}
