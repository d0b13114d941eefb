package io.jhca.rxe.link;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;

/**
 * RoCEv2 over a kernel UDP socket: a non-blocking, unconnected {@link DatagramChannel} bound to
 * {@code <device address>:4791}.
 *
 * <p>IPv4: the ICRC covers the IPv4 Identification, which a UDP socket does not choose. An unconnected socket
 * with IP_MTU_DISCOVER = IP_PMTUDISC_DO sends DF datagrams with ID 0 (Linux ip_select_ident_segs; observed,
 * rocev2.md §2.4), so that is set here and our ICRCs are computed with ID 0. That is why the socket stays
 * unconnected although a connected one skips a route lookup per send: a connected socket's datagrams take their IDs
 * from a counter of the socket's own, DF or not, which no ICRC sealed before the send can know. IPv6:
 * UDP_NO_CHECK6_RX is set so that datagrams with UDP checksum 0, as Linux rxe sends them, are not dropped by the
 * kernel.
 *
 * <p>On a loopback address the socket also takes coalesced datagrams whole (UDP_GRO), and a held ACK leaves with
 * the request that releases it as one GSO datagram ({@link #sendCoalesced}): one trip through the kernel's stack for
 * both where two datagrams cost two (a 2-byte ping-pong with RC's ACKs in C, scripts/bench-udp-floor-c: 1.30-1.34x
 * the plain UDP floor by sendmmsg, 1.13-1.24x as one GSO datagram to a UDP_GRO socket, on the 2-vCPU development
 * host). Only there: every receiver on loopback is
 * on this host, where the kernel hands the datagram whole to a UDP_GRO socket or splits it at any other; on a wire
 * a NIC's segmentation may number the IPv4 IDs otherwise, so other addresses send pairs by sendmmsg.
 *
 * <p>Allocation: sending a direct buffer allocates nothing; {@code receive} returns the JDK's cached
 * InetSocketAddress while datagrams keep coming from the same source (JDK 17 DatagramChannelImpl keeps the last
 * sender), so only a change of sender allocates one address object.
 */
public final class UdpLink implements Link {

    /** The RoCEv2 UDP destination port (IANA; rxe ROCE_V2_UDP_DPORT). */
    public static final int ROCE_V2_PORT = 4791;
    /** Default socket buffer request: a window of 128 packets of 4 KiB must fit in the receiver's buffer. */
    public static final int DEFAULT_SOCKET_BUFFER = 4 << 20;
    /**
     * Longest coalesced send: well inside the 16 KiB receive slot of jhca's engine, so that a receiver takes it whole,
     * with room for a 4 KiB MTU packet and its ACK.
     */
    static final int MAX_COALESCED = 4096 + 256;

    /**
     * Longest burst ({@link #sendBurst}): three 4 KiB MTU packets, well inside the 16 KiB receive slot of jhca's engine
     * and a packet ring's frame, so that a receiver takes it whole.
     */
    static final int MAX_BURST = 3 * 4096 + 512;

    private final DatagramChannel channel;
    private final InetSocketAddress local;
    private final GroupSockets groups;
    private final Recvmmsg batchReceive;
    private final Sendmmsg pairSend;
    private final int fd;
    /** The socket takes coalesced datagrams whole (UDP_GRO), and this link sends pairs coalesced. */
    private final boolean coalesce;
    /** Where datagrams are received from when not by the socket (a loopback link with CAP_NET_RAW), else null. */
    private final PacketRing ring;
    /** How this link receives, for banners and diagnostics: "packet ring", or "socket" and why not a ring. */
    private final String receivePath;
    /** Entries of a frame taken by {@link #receive(ByteBuffer)} from the ring, and the next to hand over. */
    private static final int SINGLE_ENTRIES = 8;
    private RxBatch single;
    private int singleNext;
    /** Set by close; the batch receive reads it first, so no system call goes to a descriptor closed (and reused). */
    private volatile boolean closed;
    private long sendErrors;

    private UdpLink(final DatagramChannel channel, final InetSocketAddress local, final int socketBuffer, final int fd,
            final boolean coalesce, final PacketRing ring, final String receivePath) {
        this.channel = channel;
        this.ring = ring;
        this.receivePath = receivePath;
        this.local = local;
        this.coalesce = coalesce;
        this.groups = new GroupSockets(local.getAddress(), local.getPort(), socketBuffer);
        this.batchReceive = new Recvmmsg(fd, coalesce);
        this.pairSend = new Sendmmsg(fd, !(local.getAddress() instanceof Inet4Address));
        this.fd = fd;
    }

    /** Binds {@code address:4791} with {@link #DEFAULT_SOCKET_BUFFER} socket buffers. */
    public static UdpLink open(final InetAddress address) {
        return open(new InetSocketAddress(address, ROCE_V2_PORT), DEFAULT_SOCKET_BUFFER);
    }

    /**
     * Binds {@code local}; {@code socketBuffer} is asked for as receive and send buffer ({@link SocketBuffers}: past
     * net.core.rmem_max / wmem_max where the process may).
     */
    public static UdpLink open(final InetSocketAddress local, final int socketBuffer) {
        return open(local, socketBuffer, true);
    }

    /**
     * {@link #open(InetSocketAddress, int)}; with {@code coalesce} a socket on a loopback address takes coalesced
     * datagrams whole and sends pairs coalesced. Without it (a link read one datagram at a time, as a fault-injecting
     * one is), every datagram arrives alone.
     */
    public static UdpLink open(final InetSocketAddress local, final int socketBuffer, final boolean coalesce) {
        return open(local, socketBuffer, coalesce, true);
    }

    /**
     * {@link #open(InetSocketAddress, int, boolean)}; with {@code ring} a link that takes coalesced datagrams whole on
     * an IPv4 loopback address receives from a {@link PacketRing} where the process may open one (CAP_NET_RAW) and
     * the kernel describes a coalesced datagram to it; otherwise, and without {@code ring}, by its socket.
     */
    public static UdpLink open(final InetSocketAddress local, final int socketBuffer, final boolean coalesce,
            final boolean ring) {
        final boolean v4 = local.getAddress() instanceof Inet4Address;
        if (v4 && refusedByTheJdk(local.getAddress())) {
            throw new IllegalStateException("cannot open the RoCEv2 UDP socket on " + local + ": the JDK refuses to"
                    + " bind a loopback address ending in .255 on Linux (127.x.y.255); choose another");
        }
        DatagramChannel ch = null;
        try {
            ch = DatagramChannel.open(v4 ? StandardProtocolFamily.INET : StandardProtocolFamily.INET6);
            ch.configureBlocking(false);
            SocketBuffers.apply(ch, socketBuffer);
            ch.bind(local);
            final int fd = NativeSocket.fd(ch);
            if (v4) {
                NativeSocket.setInt(fd, NativeSocket.IPPROTO_IP, NativeSocket.IP_MTU_DISCOVER,
                        NativeSocket.IP_PMTUDISC_DO, "IP_MTU_DISCOVER=IP_PMTUDISC_DO");
            } else {
                NativeSocket.setInt(fd, NativeSocket.SOL_UDP, NativeSocket.UDP_NO_CHECK6_RX, 1, "UDP_NO_CHECK6_RX");
            }
            multicastOut(ch, local.getAddress());
            final boolean gro = coalesce && local.getAddress().isLoopbackAddress() && groOn(fd);
            final InetSocketAddress bound = (InetSocketAddress) ch.getLocalAddress();
            if (!gro || !ring) {
                return new UdpLink(ch, bound, socketBuffer, fd, gro, null,
                        "socket" + (gro ? " (the packet ring was not asked for)" : ""));
            }
            final RingProbe.Outcome r = RingProbe.open(bound, fd, socketBuffer);
            return new UdpLink(ch, bound, socketBuffer, fd, gro, r.ring(), r.path());
        } catch (final IOException | RuntimeException e) {
            if (ch != null) {
                try {
                    ch.close();
                } catch (final IOException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            throw new IllegalStateException("cannot open the RoCEv2 UDP socket on " + local + ": " + e.getMessage()
                    + (e instanceof java.net.BindException ? " (is another RoCE device, e.g. the kernel's rdma_rxe,"
                    + " already bound to this address and port?)" : ""), e);
        }
    }

    /**
     * Whether the JDK refuses to bind {@code address}: on Linux its NET_Bind (net_util_md.c) fails an IPv4 address with
     * {@code (addr & 0x7f0000ff) == 0x7f0000ff}, among local ones 127.x.y.255, with EADDRNOTAVAIL before any system
     * call, though the kernel binds it. A device there failed with a BindException that blamed another device.
     */
    static boolean refusedByTheJdk(final InetAddress address) {
        final byte[] a = address.getAddress();
        return a.length == 4 && a[0] == 127 && a[3] == (byte) 0xFF
                && System.getProperty("os.name", "").startsWith("Linux");
    }

    /** UDP_GRO on, if the kernel has it (5.0; UDP_SEGMENT, which coalesced sends need, came in 4.18). */
    private static boolean groOn(final int fd) {
        try {
            NativeSocket.setInt(fd, NativeSocket.SOL_UDP, NativeSocket.UDP_GRO, 1, "UDP_GRO");
            return true;
        } catch (final RuntimeException e) {
            return false;
        }
    }

    /**
     * Multicast sends leave through the device's own interface (IP_MULTICAST_IF), never by the default route, and
     * loop back to the host's other members (IP_MULTICAST_LOOP, the default), as Linux rxe's sends do; hop limit 1
     * (the kernel's default) keeps them on the link. A device on a wildcard or unknown address keeps the kernel's
     * choice.
     */
    private static void multicastOut(final DatagramChannel ch, final InetAddress address) throws IOException {
        if (address.isAnyLocalAddress()) {
            return;
        }
        final java.net.NetworkInterface ni = GroupSockets.findInterface(address);
        if (ni != null) {
            ch.setOption(StandardSocketOptions.IP_MULTICAST_IF, ni);
            ch.setOption(StandardSocketOptions.IP_MULTICAST_LOOP, true);
        }
    }

    @Override
    public void joinGroup(final InetAddress group) {
        groups.join(group);
    }

    @Override
    public void leaveGroup(final InetAddress group) {
        groups.leave(group);
    }

    @Override
    public InetSocketAddress receiveGroup(final ByteBuffer buffer) {
        return groups.receive(buffer);
    }

    @Override
    public InetAddress lastGroup() {
        return groups.last();
    }

    @Override
    public boolean send(final ByteBuffer datagram, final InetSocketAddress peer) {
        try {
            return channel.send(datagram, peer) > 0;
        } catch (final IOException e) {
            sendErrors++; // e.g. ENETUNREACH; the transport's retry covers it
            return false;
        }
    }

    /** Both datagrams in one sendmmsg(2) (see {@link Sendmmsg}); the second alone if the kernel refused the first. */
    @Override
    public int sendPair(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer, final int from) {
        if (closed) {
            return 0;
        }
        final int n = pairSend.send(first, second, peer);
        if (n == 2) {
            return FIRST_SENT | SECOND_SENT;
        }
        sendErrors++;
        if (n == 1) {
            return FIRST_SENT;   // the second met a full socket buffer or an error: a retry now would meet it again
        }
        return send(second, peer) ? SECOND_SENT : 0;
    }

    @Override
    public boolean sendsCoalesced(final int firstLength, final int secondLength, final int from) {
        // an empty second segment would vanish: the kernel sends a GSO send no longer than one segment as is
        return coalesce && firstLength >= secondLength && secondLength > 0
                && firstLength + secondLength <= MAX_COALESCED;
    }

    /** Both datagrams in one GSO sendmmsg(2) (see {@link Sendmmsg#sendCoalesced}), if {@link #sendsCoalesced}. */
    @Override
    public int sendCoalesced(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer,
            final int from) {
        if (!sendsCoalesced(first.remaining(), second.remaining(), from)) {
            return sendPair(first, second, peer, from);
        }
        if (closed) {
            return 0;
        }
        if (pairSend.sendCoalesced(first, second, peer)) {
            return FIRST_SENT | SECOND_SENT;
        }
        sendErrors++;   // a full socket buffer: both are lost, as two refused datagrams would be
        return 0;
    }

    @Override
    public int maxBurst(final int from) {
        return coalesce ? MAX_BURST : 0;
    }

    /** The burst in one GSO sendmsg(2) (see {@link Sendmmsg#sendBurst}), on a link that sends coalesced. */
    @Override
    public boolean sendBurst(final ByteBuffer burst, final int segmentSize, final InetSocketAddress peer,
            final int from) {
        if (!coalesce || closed || burst.remaining() > MAX_BURST || segmentSize <= 0
                || burst.remaining() > segmentSize * MAX_BURST_SEGMENTS) {
            return false;
        }
        if (pairSend.sendBurst(burst, segmentSize, peer)) {
            return true;
        }
        sendErrors++;   // a full socket buffer: the burst is lost, as its datagrams sent one by one would be
        return false;
    }

    /**
     * One datagram; not for a socket that takes coalesced datagrams whole (the engine receives those in batches,
     * split; a fault-injecting link opens its socket without).
     */
    @Override
    public InetSocketAddress receive(final ByteBuffer buffer) {
        if (ring != null) {
            return receiveOne(buffer);
        }
        try {
            return (InetSocketAddress) channel.receive(buffer);
        } catch (final IOException e) {
            return null;
        }
    }

    /**
     * One datagram from the ring: the segments of a frame are kept in a small batch of their own and handed over one
     * a call. Not to be mixed with batch receives (what this holds is theirs no longer).
     */
    private InetSocketAddress receiveOne(final ByteBuffer buffer) {
        if (closed) {
            return null;
        }
        if (single == null) {
            single = new RxBatch(SINGLE_ENTRIES, 16 * 1024);
        }
        if (singleNext == single.count()) {
            single.clear();
            singleNext = 0;
            if (ring.receive(single, 0) == 0) {
                return null;
            }
        }
        final int i = singleNext++;
        final int n = Math.min(single.length(i), buffer.remaining());   // cut to the room, as a socket receive is
        new org.agrona.concurrent.UnsafeBuffer(single.address(i), n).getBytes(0, buffer, n);
        final InetSocketAddress from = single.source(i);
        if (singleNext == single.count()) {
            ring.releaseHeld();   // every entry of the frames copied out
        }
        return from;
    }

    /** Every waiting datagram up to the batch's room in one recvmmsg(2) (see {@link Recvmmsg}). */
    @Override
    public int receive(final RxBatch batch) {
        return receive(batch, 0);
    }

    /** {@link #receive(RxBatch)}, recording {@code on} as the local address index of what arrives. */
    int receive(final RxBatch batch, final int on) {
        if (closed) {
            return 0;
        }
        final PacketRing r = ring;
        return r != null ? r.receive(batch, on) : batchReceive.receive(batch, on);
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    /** The socket, then every joined group's. */
    @Override
    public int pollFds(final int[] into) {
        return pollFds(into, 0);
    }

    /** {@link #pollFds(int[])} from {@code into[at]} on; returns how many this link has. */
    int pollFds(final int[] into, final int at) {
        if (closed) {
            return -1;
        }
        if (at < into.length) {
            into[at] = ring != null ? ring.fd() : fd;
        }
        return 1 + groups.pollFds(into, at + 1);
    }

    /** Gives the ring's frames back to the kernel: their entries are handled (see {@link PacketRing#releaseHeld}). */
    @Override
    public void handled() {
        final PacketRing r = ring;
        if (r != null && !closed) {
            r.releaseHeld();
        }
    }

    /** How this link receives: "packet ring", or "socket" with why not a ring where one was asked for. */
    @Override
    public String receivePath() {
        return receivePath;
    }

    /** Frames the packet ring dropped (cut short, or headers that did not add up); 0 for a socket receive. */
    public long ringDrops() {
        return ring != null ? ring.dropped() : 0;
    }

    /** Datagrams the kernel refused with an error. */
    public long sendErrors() {
        return sendErrors;
    }

    @Override
    public void close() {
        closed = true;
        groups.close();
        if (ring != null) {
            ring.close();
        }
        try {
            channel.close();
        } catch (final IOException e) {
            // nothing more to release
        }
    }
}
