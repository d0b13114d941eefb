package io.jhca.rxe;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.rxe.wire.Aeth;
import io.jhca.rxe.wire.AtomicAckEth;
import io.jhca.rxe.wire.AtomicEth;
import io.jhca.rxe.wire.Bth;
import io.jhca.rxe.wire.Icrc;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.PacketLayout;
import io.jhca.rxe.wire.Reth;

/**
 * A hostile peer: sends well-formed RoCEv2 packets with valid ICRCs from a device's own IP address (another UDP
 * port: rxe checks the source address of an RC packet, not its port) to another device.
 */
final class Forger implements AutoCloseable {

    private final DatagramChannel channel;
    private final InetSocketAddress target;
    private final int src;
    private final int dst;
    private final int srcPort;
    private final UnsafeBuffer pkt = new UnsafeBuffer(ByteBuffer.allocateDirect(16 * 1024));
    private final Icrc icrc = new Icrc();
    private final Bth bth = new Bth();
    /** The IPv4 Identification the ICRC is computed for (jhca sends 0, Linux rxe other values). */
    int ipv4Id;

    /** Packets that seem to come from {@code from} and go to {@code to}. */
    Forger(final RxeContext from, final RxeContext to) throws IOException {
        final InetAddress fromAddress = from.config().address();
        channel = DatagramChannel.open(StandardProtocolFamily.INET);
        channel.bind(new InetSocketAddress(fromAddress, 0));
        target = new InetSocketAddress(to.config().address(), 4791);
        src = DatagramAndUcTest.ipv4FromAddress(fromAddress);
        dst = DatagramAndUcTest.ipv4(to);
        srcPort = ((InetSocketAddress) channel.getLocalAddress()).getPort();
    }

    /** An RC_ACKNOWLEDGE with {@code aeth} (syndrome << 24 | msn). */
    void ack(final int destQp, final int psn, final int aeth) throws IOException {
        header(Opcode.RC_ACKNOWLEDGE, destQp, psn, 0);
        pkt.putInt(Bth.LENGTH, aeth, java.nio.ByteOrder.BIG_ENDIAN);
        send(Bth.LENGTH + Aeth.LENGTH);
    }

    /** An RC_RDMA_READ_RESPONSE_ONLY carrying an ACK AETH and {@code payload} zero bytes. */
    void readResponseOnly(final int destQp, final int psn, final int payload) throws IOException {
        final int op = Opcode.RC_RDMA_READ_RESPONSE_ONLY;
        header(op, destQp, psn, payload);
        new Aeth().wrap(pkt, Opcode.aethOffset(op)).set(Aeth.SYNDROME_ACK, 0);
        pkt.setMemory(Opcode.payloadOffset(op), payload + Bth.padFor(payload), (byte) 0x5A);
        send(Opcode.payloadOffset(op) + payload + Bth.padFor(payload));
    }

    /** An RC_ATOMIC_ACKNOWLEDGE with an ACK AETH and {@code original}. */
    void atomicAck(final int destQp, final int psn, final long original) throws IOException {
        final int op = Opcode.RC_ATOMIC_ACKNOWLEDGE;
        header(op, destQp, psn, 0);
        new Aeth().wrap(pkt, Opcode.aethOffset(op)).set(Aeth.SYNDROME_ACK, 0);
        new AtomicAckEth().wrap(pkt, Opcode.atomicAckEthOffset(op)).origRemoteData(original);
        send(Opcode.payloadOffset(op));
    }

    /** An RC_RDMA_READ_REQUEST. */
    void readRequest(final int destQp, final int psn, final long va, final int rkey, final int length)
            throws IOException {
        final int op = Opcode.RC_RDMA_READ_REQUEST;
        header(op, destQp, psn, 0);
        new Reth().wrap(pkt, Opcode.rethOffset(op)).set(va, rkey, length);
        send(Opcode.payloadOffset(op));
    }

    /** An RC_RDMA_WRITE_ONLY whose RETH says {@code rethLength} bytes and which carries {@code payload} bytes. */
    void writeOnly(final int destQp, final int psn, final long va, final int rkey, final int rethLength,
            final int payload) throws IOException {
        request(Opcode.RC_RDMA_WRITE_ONLY, destQp, psn, va, rkey, rethLength, payload, Bth.padFor(payload));
    }

    /**
     * A SEND or RDMA WRITE packet of {@code opcode} (with a RETH of {@code va}, {@code rkey} and {@code rethLength} if
     * it is a WRITE's FIRST or ONLY) carrying {@code payload} bytes of 0x5A and {@code pad} pad bytes, its BTH's pad
     * count {@code pad} (the right one is {@link Bth#padFor}).
     */
    void request(final int opcode, final int destQp, final int psn, final long va, final int rkey, final int rethLength,
            final int payload, final int pad) throws IOException {
        pkt.setMemory(0, 128, (byte) 0);
        bth.wrap(pkt, 0).set(opcode, false, pad, Bth.DEFAULT_PKEY, destQp, true, psn);
        if (opcode == Opcode.RC_RDMA_WRITE_FIRST || opcode == Opcode.RC_RDMA_WRITE_ONLY) {
            new Reth().wrap(pkt, Opcode.rethOffset(opcode)).set(va, rkey, rethLength);
        }
        pkt.setMemory(Opcode.payloadOffset(opcode), payload + pad, (byte) 0x5A);
        send(Opcode.payloadOffset(opcode) + payload + pad);
    }

    /** An RC_FETCH_ADD of {@code add} at {@code va}. */
    void fetchAdd(final int destQp, final int psn, final long va, final int rkey, final long add) throws IOException {
        final int op = Opcode.RC_FETCH_ADD;
        header(op, destQp, psn, 0);
        new AtomicEth().wrap(pkt, Opcode.atomicEthOffset(op)).set(va, rkey, add, 0);
        send(Opcode.payloadOffset(op));
    }

    private void header(final int opcode, final int destQp, final int psn, final int payload) {
        pkt.setMemory(0, 128, (byte) 0);
        bth.wrap(pkt, 0).set(opcode, false, Bth.padFor(payload), Bth.DEFAULT_PKEY, destQp, true, psn);
    }

    /** An RC_SEND_ONLY with {@code payload} bytes of 0x5A. */
    void sendOnly(final int destQp, final int psn, final int payload) throws IOException {
        final int op = io.jhca.rxe.wire.Opcode.RC_SEND_ONLY;
        header(op, destQp, psn, payload);
        pkt.setMemory(Opcode.payloadOffset(op), payload, (byte) 0x5A);
        send(Opcode.payloadOffset(op) + payload + Bth.padFor(payload));
    }

    /** Appends the ICRC (IPv4 ID {@link #ipv4Id} and DF) to {@code roce} bytes and sends the datagram. */
    private void send(final int roce) throws IOException {
        Icrc.put(pkt, roce, icrc.computeIpv4(src, dst, ipv4Id, PacketLayout.IPV4_DF, srcPort, 4791, pkt, 0, roce));
        final ByteBuffer bb = pkt.byteBuffer().duplicate();
        bb.clear().limit(roce + Icrc.LENGTH);
        channel.send(bb, target);
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
