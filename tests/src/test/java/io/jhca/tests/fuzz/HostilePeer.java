package io.jhca.tests.fuzz;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.DatagramChannel;
import java.util.EnumMap;
import java.util.Map;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.rxe.wire.Bth;
import io.jhca.rxe.wire.Icrc;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.PacketLayout;
import io.jhca.rxe.wire.Psn;

/**
 * A hostile RoCEv2 peer: sends packets of every kind at one device, most with valid ICRCs and from the address of
 * the device's real peer (rxe checks an RC packet's source address, not its port), so they reach live QPs.
 *
 * <p>PSNs of packets aimed at a live QP are never ones the real traffic could use: requests go ahead of anything
 * the real requester posted (by at least {@link #MARGIN}) or behind what it saw completed (duplicates); responses
 * go outside the requester's window of PSNs sent (ghosts) or behind it (stale). A packet inside those windows
 * would be a legitimate protocol action (RoCE has no authentication), not an attack the transport can detect.
 */
final class HostilePeer implements AutoCloseable {

    /** What was sent, by kind. */
    enum Kind {
        RANDOM_BYTES, TRUNCATED, BAD_ICRC, BAD_TVER, BAD_PKEY, OVERSIZE_DATAGRAM,
        REQUEST_WRONG_PSN, OVERSIZE_PAYLOAD, GHOST_RESPONSE, STALE_RESPONSE,
        OTHER_TRANSPORT, WRONG_QPN, WRONG_SOURCE
    }

    /** The PSNs of one direction of a live RC connection, as its real traffic sees them (mod 2^24). */
    interface Window {
        /** Every PSN of the WQEs the requester has seen complete lies before this one. */
        int completedEnd();

        /** Every PSN of the WQEs posted so far lies before this one. */
        int postedEnd();
    }

    /** PSNs this far past anything posted cannot be reached by real traffic before a forged packet is handled. */
    static final int MARGIN = 1 << 16;
    private static final int[] RC_REQUESTS;
    private static final int[] RC_RESPONSES;
    private static final int[] OTHER_OPCODES;

    static {
        final int[][] lists = new int[3][256];
        final int[] n = new int[3];
        for (int op = 0; op < 256; op++) {
            final int list = !Opcode.isValid(op) || Opcode.transport(op) != Opcode.TRANSPORT_RC ? 2
                    : Opcode.isRequest(op) ? 0 : 1;
            lists[list][n[list]++] = op;
        }
        RC_REQUESTS = java.util.Arrays.copyOf(lists[0], n[0]);
        RC_RESPONSES = java.util.Arrays.copyOf(lists[1], n[1]);
        OTHER_OPCODES = java.util.Arrays.copyOf(lists[2], n[2]);
    }

    private final Random random;
    private final DatagramChannel fromPeer;
    private final DatagramChannel fromStranger;
    private final InetSocketAddress target;
    private final int peerIp;
    private final int strangerIp;
    private final int targetIp;
    private final int peerPort;
    private final int strangerPort;
    private final int mtu;
    private final UnsafeBuffer pkt = new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 1024));
    private final Icrc icrc = new Icrc();
    private final Bth bth = new Bth();
    private final Map<Kind, Long> sent = new EnumMap<>(Kind.class);

    HostilePeer(final long seed, final InetAddress peer, final InetAddress stranger, final InetAddress target,
            final int mtu) throws IOException {
        this.random = new Random(seed);
        this.fromPeer = open(peer);
        this.fromStranger = open(stranger);
        this.target = new InetSocketAddress(target, PacketLayout.ROCE_V2_PORT);
        this.peerIp = ipv4(peer);
        this.strangerIp = ipv4(stranger);
        this.targetIp = ipv4(target);
        this.peerPort = ((InetSocketAddress) fromPeer.getLocalAddress()).getPort();
        this.strangerPort = ((InetSocketAddress) fromStranger.getLocalAddress()).getPort();
        this.mtu = mtu;
        for (final Kind k : Kind.values()) {
            sent.put(k, 0L);
        }
    }

    private static DatagramChannel open(final InetAddress address) throws IOException {
        final DatagramChannel c = DatagramChannel.open(StandardProtocolFamily.INET);
        c.bind(new InetSocketAddress(address, 0));
        return c;
    }

    static int ipv4(final InetAddress a) {
        final byte[] b = a.getAddress();
        return (b[0] & 0xFF) << 24 | (b[1] & 0xFF) << 16 | (b[2] & 0xFF) << 8 | (b[3] & 0xFF);
    }

    Map<Kind, Long> sent() {
        return sent;
    }

    /**
     * Sends one packet of a random kind at QP {@code qpn}: {@code in} is the direction in which it is the
     * responder (requests go there), {@code out} the one in which it is the requester (responses go there).
     */
    void sendOne(final int qpn, final Window in, final Window out) throws IOException {
        final Window w = in;
        final Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
        sent.merge(kind, 1L, Long::sum);
        switch (kind) {
            case RANDOM_BYTES: {
                final int n = random.nextInt(160);
                for (int i = 0; i < n; i++) {
                    pkt.putByte(i, (byte) random.nextInt());
                }
                send(fromPeer, n);
                return;
            }
            case TRUNCATED: {
                final int n = request(qpn, pick(RC_REQUESTS), requestPsn(w), payload(false));
                send(fromPeer, random.nextInt(n)); // cut anywhere, ICRC included
                return;
            }
            case BAD_ICRC: {
                final int n = request(qpn, pick(RC_REQUESTS), requestPsn(w), payload(false));
                final int bit = random.nextInt(n * 8);
                pkt.putByte(bit >> 3, (byte) (pkt.getByte(bit >> 3) ^ 1 << (bit & 7)));
                send(fromPeer, n);
                return;
            }
            case BAD_TVER: {
                final int n = prepare(qpn, pick(RC_REQUESTS), requestPsn(w), payload(false));
                pkt.putByte(1, (byte) (pkt.getByte(1) | 1 + random.nextInt(15)));
                finish(fromPeer, n);
                return;
            }
            case BAD_PKEY: {
                final int n = prepare(qpn, pick(RC_REQUESTS), requestPsn(w), payload(false));
                int pkey;
                do {
                    pkey = random.nextInt(0x10000);
                } while ((pkey & 0x7FFF) == 0x7FFF);
                pkt.putShort(2, (short) pkey, ByteOrder.BIG_ENDIAN);
                finish(fromPeer, n);
                return;
            }
            case OVERSIZE_DATAGRAM: {
                final int n = 16 * 1024 + random.nextInt(48 * 1024 - 100);
                prepare(qpn, pick(RC_REQUESTS), requestPsn(w), 0);
                finish(fromPeer, n);
                return;
            }
            case REQUEST_WRONG_PSN:
                finish(fromPeer, prepare(qpn, pick(RC_REQUESTS), requestPsn(w), payload(false)));
                return;
            case OVERSIZE_PAYLOAD:
                finish(fromPeer, prepare(qpn, pick(RC_REQUESTS), requestPsn(w), payload(true)));
                return;
            case GHOST_RESPONSE:
                finish(fromPeer, prepare(qpn, pick(RC_RESPONSES), ghostPsn(out), payload(false)));
                return;
            case STALE_RESPONSE:
                finish(fromPeer, prepare(qpn, pick(RC_RESPONSES), Psn.add(out.completedEnd(), -1 - random.nextInt(1 << 22)),
                        payload(false)));
                return;
            case OTHER_TRANSPORT:
                finish(fromPeer, prepare(qpn, pick(OTHER_OPCODES), random.nextInt(1 << 24), payload(false)));
                return;
            case WRONG_QPN: {
                final int op = random.nextBoolean() ? pick(RC_REQUESTS) : pick(RC_RESPONSES);
                final int n = prepare(qpn, op, random.nextInt(1 << 24), payload(false));
                final int wrong = random.nextInt(4) == 0 ? random.nextInt(2) : 0x800000 | random.nextInt(0x800000);
                bth.wrap(pkt, 0).destQp(wrong); // QP0, QP1 (not provided) or a QPN nobody has
                finish(fromPeer, n);
                return;
            }
            default: { // WRONG_SOURCE: even PSNs the real traffic uses, from an address that is not the peer's
                final int op = random.nextBoolean() ? pick(RC_REQUESTS) : pick(RC_RESPONSES);
                final int span = Math.max(1, Psn.diff(w.postedEnd(), w.completedEnd()) + 1);
                finish(fromStranger, prepare(qpn, op, Psn.add(w.completedEnd(), random.nextInt(span)), payload(false)));
            }
        }
    }

    private int pick(final int[] ops) {
        return ops[random.nextInt(ops.length)];
    }

    /** Payload bytes: mostly within the MTU; {@code oversize}: more than an MTU (up to 4 MTUs). */
    private int payload(final boolean oversize) {
        if (oversize) {
            return mtu + 1 + random.nextInt(3 * mtu);
        }
        final int r = random.nextInt(4);
        return r == 0 ? 0 : r == 1 ? mtu : random.nextInt(mtu + 1);
    }

    /** Ahead of anything posted (by MARGIN and more), or behind everything completed: never the expected PSN. */
    private int requestPsn(final Window w) {
        if (random.nextBoolean()) {
            return Psn.add(w.postedEnd(), MARGIN + random.nextInt(Psn.HALF - 2 * MARGIN));
        }
        return Psn.add(w.completedEnd(), -1 - random.nextInt(Psn.HALF - MARGIN));
    }

    /**
     * Never sent: past what was posted, often just around 2^23 past it, where modular comparison flips and a PSN
     * that lies 2^23 past the highest one sent looks older than the last PSN of a message still being sent.
     */
    private int ghostPsn(final Window w) {
        if (random.nextInt(3) == 0) {
            return Psn.add(w.postedEnd(), Psn.HALF - random.nextInt(2048) + random.nextInt(32));
        }
        return Psn.add(w.postedEnd(), MARGIN + random.nextInt(Psn.MASK - 2 * MARGIN));
    }

    /**
     * Writes BTH (opcode, PSN, {@code qpn}, pad), random extension headers and {@code payload} random bytes;
     * returns the length with the ICRC.
     */
    private int prepare(final int qpn, final int opcode, final int psn, final int payload) {
        final int headers = Opcode.isKnown(opcode) ? Opcode.payloadOffset(opcode) : Bth.LENGTH;
        final int n = Opcode.hasPayload(opcode) || !Opcode.isKnown(opcode) ? payload : 0;
        final int end = headers + n + Bth.padFor(n);
        for (int i = Bth.LENGTH; i < end; i++) {
            pkt.putByte(i, (byte) random.nextInt());
        }
        bth.wrap(pkt, 0).set(opcode, random.nextBoolean(), Bth.padFor(n), Bth.DEFAULT_PKEY, qpn,
                random.nextBoolean(), psn);
        return end + Icrc.LENGTH;
    }

    /** {@link #prepare} plus a valid ICRC, not sent. */
    private int request(final int qpn, final int opcode, final int psn, final int payload) {
        final int n = prepare(qpn, opcode, psn, payload);
        putIcrc(peerIp, peerPort, n);
        return n;
    }

    /** Writes the ICRC (as jhca computes it: IPv4 ID 0, DF) for {@code length} bytes and sends them. */
    private void finish(final DatagramChannel from, final int length) throws IOException {
        putIcrc(from == fromPeer ? peerIp : strangerIp, from == fromPeer ? peerPort : strangerPort, length);
        send(from, length);
    }

    private void putIcrc(final int srcIp, final int port, final int length) {
        final int roce = length - Icrc.LENGTH;
        if (roce >= Bth.LENGTH && length <= 0xFFFF - 28) {
            Icrc.put(pkt, roce, icrc.computeIpv4(srcIp, targetIp, 0, PacketLayout.IPV4_DF, port,
                    PacketLayout.ROCE_V2_PORT, pkt, 0, roce));
        }
    }

    private void send(final DatagramChannel from, final int length) throws IOException {
        final ByteBuffer bb = pkt.byteBuffer().duplicate();
        bb.clear().limit(length);
        from.send(bb, target);
    }

    @Override
    public void close() throws IOException {
        fromPeer.close();
        fromStranger.close();
    }
}
