package io.jhca.rxe.link;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * sendmmsg(2) of two datagrams to one peer on one UDP socket, in order. A responder's held ACK leaves this way with
 * the request packet that releases it: one system call where two sendto calls cost a second trip into the kernel on
 * the round trip (about 1.4 us of a 4.9 us loopback half round trip on the 2-vCPU development host).
 *
 * <p>{@link #sendCoalesced} sends the two as one UDP GSO datagram instead, by sendmsg(2) of a third header over both
 * iovecs with a UDP_SEGMENT cmsg giving the first's length as the segment size (see {@link UdpLink}); sendmmsg(2) of
 * that one message took 40-55 ns longer in the kernel (C, the Intel development host). {@link #sendBurst} sends a
 * run of packets laid end to end the same way, through that header over one iovec.
 *
 * <p>Three struct mmsghdr, two struct iovec, one struct sockaddr and one cmsg live in native memory made once, with
 * the layouts {@link Recvmmsg} names (checked against the C headers by its golden test). The peer's sockaddr is
 * written again only when the peer changes, so a run of pairs to one peer allocates nothing. Engine thread only.
 */
final class Sendmmsg {

    private static final int IOVECS = 2 * Recvmmsg.MMSGHDR_SIZE;
    private static final int NAME = IOVECS + 2 * Recvmmsg.IOVEC_SIZE;
    /** sizeof(struct sockaddr_in), sizeof(struct sockaddr_in6), offsetof(sockaddr_in6, sin6_flowinfo) (netinet/in.h). */
    static final int SOCKADDR_IN_SIZE = 16;
    static final int SOCKADDR_IN6_SIZE = 28;
    static final int SIN6_FLOWINFO = 4;
    /** The coalesced send's header, and its cmsg: CMSG_LEN(sizeof(u16)) = 18, CMSG_SPACE = 24 (LP64). */
    private static final int COALESCED = NAME + Recvmmsg.NAME_SIZE;
    private static final int SEGMENT_CMSG = COALESCED + Recvmmsg.MMSGHDR_SIZE;
    static final int SEGMENT_CMSG_LEN = 18;
    static final int SEGMENT_CMSG_SPACE = 24;

    private final int fd;
    private final boolean ipv6Socket;
    private final UnsafeBuffer headers;
    private final long base;
    private InetSocketAddress peer;

    Sendmmsg(final int fd, final boolean ipv6Socket) {
        this.fd = fd;
        this.ipv6Socket = ipv6Socket;
        this.headers = new UnsafeBuffer(BufferUtil.allocateDirectAligned(SEGMENT_CMSG + SEGMENT_CMSG_SPACE, 64));
        this.base = headers.addressOffset();
        for (int i = 0; i < 2; i++) {
            final int at = i * Recvmmsg.MMSGHDR_SIZE;
            headers.putLong(at + Recvmmsg.MSG_NAME, base + NAME);
            headers.putLong(at + Recvmmsg.MSG_IOV, base + IOVECS + (long) i * Recvmmsg.IOVEC_SIZE);
            headers.putLong(at + Recvmmsg.MSG_IOVLEN, 1);
        }
        headers.putLong(COALESCED + Recvmmsg.MSG_NAME, base + NAME);
        headers.putLong(COALESCED + Recvmmsg.MSG_IOV, base + IOVECS);
        headers.putLong(COALESCED + Recvmmsg.MSG_IOVLEN, 2);
        headers.putLong(COALESCED + Recvmmsg.MSG_CONTROL, base + SEGMENT_CMSG);
        headers.putLong(COALESCED + Recvmmsg.MSG_CONTROLLEN, SEGMENT_CMSG_SPACE);
        headers.putLong(SEGMENT_CMSG, SEGMENT_CMSG_LEN);
        headers.putInt(SEGMENT_CMSG + NativeSocket.CMSG_LEVEL, NativeSocket.SOL_UDP);
        headers.putInt(SEGMENT_CMSG + NativeSocket.CMSG_TYPE, NativeSocket.UDP_SEGMENT);
    }

    /**
     * Sends {@code first} then {@code second} (direct buffers, position to limit) to {@code peer}; returns how many
     * the kernel took, counted from the first, or -1 if it refused the first. A datagram taken has its position moved
     * to its limit, as a channel's send does.
     */
    int send(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer) {
        to(peer);
        iovec(0, first);
        iovec(1, second);
        final int n = NativeSocket.sendmmsg(fd, base, 2, Recvmmsg.MSG_DONTWAIT);
        if (n >= 1) {
            first.position(first.limit());
        }
        if (n == 2) {
            second.position(second.limit());
        }
        return n;
    }

    /**
     * Sends {@code first} and {@code second} as one GSO datagram of segment size {@code first.remaining()} (the caller
     * makes sure the second is no longer than the first); returns whether the kernel took it, and then moves both
     * positions to their limits.
     */
    boolean sendCoalesced(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer) {
        iovec(0, first);
        iovec(1, second);
        if (!sendGso(2, first.remaining(), peer)) {
            return false;
        }
        first.position(first.limit());
        second.position(second.limit());
        return true;
    }

    /**
     * Sends {@code burst} (position to limit) as one GSO datagram of segment size {@code segmentSize}, by the coalesced
     * header over one iovec; returns whether the kernel took it, and then moves the position to the limit.
     */
    boolean sendBurst(final ByteBuffer burst, final int segmentSize, final InetSocketAddress peer) {
        iovec(0, burst);
        if (!sendGso(1, segmentSize, peer)) {
            return false;
        }
        burst.position(burst.limit());
        return true;
    }

    /** sendmsg(2) of the coalesced header over its first {@code iovecs} iovecs, UDP_SEGMENT {@code segmentSize}. */
    private boolean sendGso(final int iovecs, final int segmentSize, final InetSocketAddress peer) {
        to(peer);
        headers.putLong(COALESCED + Recvmmsg.MSG_IOVLEN, iovecs);
        headers.putShort(SEGMENT_CMSG + NativeSocket.CMSG_DATA, (short) segmentSize);
        // an mmsghdr starts with its msghdr
        return NativeSocket.sendmsg(fd, base + COALESCED, Recvmmsg.MSG_DONTWAIT) >= 0;
    }

    /**
     * Points the headers at {@code peer}. Each QP holds its own peer object, so the same address comes in turns from
     * several; it is compared by value and written only when it changes (writing it takes a copy of the address: 12 B
     * a burst at four QPs).
     */
    private void to(final InetSocketAddress peer) {
        if (peer != this.peer) {
            if (peer.equals(this.peer)) {
                this.peer = peer;
            } else {
                address(peer);
            }
        }
    }

    private void iovec(final int i, final ByteBuffer datagram) {
        final int at = IOVECS + i * Recvmmsg.IOVEC_SIZE;
        headers.putLong(at, BufferUtil.address(datagram) + datagram.position());
        headers.putLong(at + Recvmmsg.IOV_LEN, datagram.remaining());
    }

    /**
     * Writes {@code to}'s struct sockaddr as the JDK's send would give it to the kernel: sockaddr_in on an IPv4 socket,
     * sockaddr_in6 on an IPv6 one (an IPv4 peer as its IPv4-mapped address).
     */
    private void address(final InetSocketAddress to) {
        final InetAddress a = to.getAddress();
        final UnsafeBuffer h = headers;
        h.setMemory(NAME, Recvmmsg.NAME_SIZE, (byte) 0);
        h.putShort(NAME + Recvmmsg.SIN_PORT, (short) to.getPort(), ByteOrder.BIG_ENDIAN);
        final int length;
        if (!ipv6Socket) {
            if (!(a instanceof Inet4Address)) {
                throw new IllegalArgumentException("an IPv6 peer " + to + " on an IPv4 socket");
            }
            h.putShort(NAME, (short) Recvmmsg.AF_INET);
            h.putBytes(NAME + Recvmmsg.SIN_ADDR, a.getAddress());
            length = SOCKADDR_IN_SIZE;
        } else {
            h.putShort(NAME, (short) Recvmmsg.AF_INET6);
            h.putInt(NAME + SIN6_FLOWINFO, 0);
            if (a instanceof Inet4Address) {
                h.putShort(NAME + Recvmmsg.SIN6_ADDR + 10, (short) 0xFFFF);   // ::ffff:a.b.c.d
                h.putBytes(NAME + Recvmmsg.SIN6_ADDR + 12, a.getAddress());
            } else {
                h.putBytes(NAME + Recvmmsg.SIN6_ADDR, a.getAddress());
                h.putInt(NAME + Recvmmsg.SIN6_SCOPE_ID, ((Inet6Address) a).getScopeId());
            }
            length = SOCKADDR_IN6_SIZE;
        }
        for (int i = 0; i < 2; i++) {
            h.putInt(i * Recvmmsg.MMSGHDR_SIZE + Recvmmsg.MSG_NAMELEN, length);
        }
        h.putInt(COALESCED + Recvmmsg.MSG_NAMELEN, length);
        this.peer = to;
    }
}
