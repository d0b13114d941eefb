package io.jhca.rxe.link;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * recvmmsg(2) on one UDP socket into an {@link RxBatch}: every datagram waiting, up to the batch's room, in one system
 * call. The receive loop of a busy-polling engine otherwise ends every pass with a recvfrom that finds nothing, a
 * system call on the path of every message (about 0.5 us here); a count below the room offered says the same
 * without one.
 *
 * <p>The headers (struct mmsghdr, struct iovec, the senders' struct sockaddr_in/_in6) live in native memory made
 * once per batch, header {@code i} pointing at slot {@code i}; a call passes the headers from the batch's first free
 * slot on. Layouts are Linux LP64's (x86-64, arm64; glibc socket.h, bits/socket.h, uio.h): mmsghdr 64 bytes = msghdr
 * (msg_name 0, msg_namelen 8, msg_iov 16, msg_iovlen 24, msg_control 32, msg_controllen 40, msg_flags 48) + msg_len
 * 56; iovec 16 bytes. Fields are in the host's byte order, the sender's port and address in network order.
 *
 * <p>On a socket that takes coalesced datagrams whole (UDP_GRO, see {@link UdpLink}) each header also has room for
 * a cmsg, where the kernel gives the segment size of a datagram that came coalesced; such a datagram is handed over
 * as one batch entry per segment, in order. So that a burst always fits, such a call asks for at most a
 * {@link Link#MAX_BURST_SEGMENTS}th of the room; a coalesced datagram of more segments than the room left is handed
 * over whole, where it fails the ICRC check and is counted as a drop. Only loopback sockets take them, and jhca sends
 * pairs and bursts of at most that many segments.
 *
 * <p>The first datagram after a call that found none is taken by recvmsg(2) into the same header, the next call
 * batching again: on loopback, recvmmsg(2) taking one datagram (the engine busy-polling a ping-pong) costs more than
 * recvmsg(2) does. In C on the Intel development host, GSO pairs to a UDP_GRO socket, the half round trip is 2.11-2.21
 * us taken by recvmsg and 2.23-2.32 by recvmmsg of eight ({@code ./scripts/bench-udp-floor-c}, "gso" and "gso_mmsg"),
 * and jhca's write-lat t_typical moved by about as much. A socket that keeps datagrams waiting (a stream) pays for one
 * single call each time its queue runs dry.
 *
 * <p>Senders are kept in a small cache of socket addresses, so a datagram from a sender seen lately allocates
 * nothing. Engine thread only.
 */
final class Recvmmsg {

    static final int MMSGHDR_SIZE = 64;
    static final int MSG_NAME = 0;
    static final int MSG_NAMELEN = 8;
    static final int MSG_IOV = 16;
    static final int MSG_IOVLEN = 24;
    static final int MSG_CONTROL = 32;
    static final int MSG_CONTROLLEN = 40;
    static final int MSG_LEN = 56;
    static final int IOVEC_SIZE = 16;
    /** struct iovec: iov_base at 0, iov_len at 8. */
    static final int IOV_LEN = 8;
    /** Room for a struct sockaddr_in6 (28 bytes), rounded up. */
    static final int NAME_SIZE = 32;
    /** MSG_DONTWAIT (bits/socket.h). */
    static final int MSG_DONTWAIT = 0x40;
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;
    /** struct sockaddr_in / sockaddr_in6 (netinet/in.h): family at 0 (host order), port at 2 (network order). */
    static final int SIN_PORT = 2;
    static final int SIN_ADDR = 4;
    static final int SIN6_ADDR = 8;
    static final int SIN6_SCOPE_ID = 24;

    /** struct cmsghdr with an int: CMSG_SPACE(sizeof(int)) = 24 (LP64), rounded up to 32. */
    static final int CONTROL_SIZE = 32;
    private final int fd;
    private final boolean whole;
    private int controlOffset;
    private RxBatch batch;
    private UnsafeBuffer headers;
    private long headersAddress;
    private int namesOffset;
    private final SenderCache senders = new SenderCache();
    /** The last call found nothing waiting: the next takes one datagram by recvmsg(2). */
    private boolean quiet = true;

    Recvmmsg(final int fd) {
        this(fd, false);
    }

    /** {@code whole}: the socket has UDP_GRO on, so a datagram may come coalesced (its segments are split here). */
    Recvmmsg(final int fd, final boolean whole) {
        this.fd = fd;
        this.whole = whole;
    }

    /**
     * Receives into {@code batch}'s free slots; returns how many entries were added (0 when none was waiting or the
     * call failed: the socket's errors are the transport's losses). {@code on} is recorded as each one's local address.
     * On a UDP_GRO socket the call asks for at most a {@link Link#MAX_BURST_SEGMENTS}th of the room, and each
     * datagram that came coalesced is split into its segments. After a call that found nothing, one datagram at most
     * (see the class comment).
     */
    int receive(final RxBatch batch, final int on) {
        final int room = batch.room();
        final int ask = whole ? room / Link.MAX_BURST_SEGMENTS : room;
        if (ask == 0) {
            return 0;   // a UDP_GRO socket: the next pass has the room a burst needs
        }
        if (batch != this.batch) {
            bind(batch);
        }
        final int first = batch.count();
        final UnsafeBuffer h = headers;
        final long header = headersAddress + (long) first * MMSGHDR_SIZE;
        final int n;
        if (quiet) {
            final long got = NativeSocket.recvmsg(fd, header, MSG_DONTWAIT);   // an mmsghdr starts with its msghdr
            if (got >= 0) {
                h.putInt(first * MMSGHDR_SIZE + MSG_LEN, (int) got);   // at most the slot's size: the iovec's length
            }
            n = got >= 0 ? 1 : 0;
        } else {
            n = NativeSocket.recvmmsg(fd, header, ask, MSG_DONTWAIT);
        }
        quiet = n <= 0;
        if (n <= 0) {
            return 0;
        }
        final int slotSize = batch.slotSize();
        for (int k = 0; k < n; k++) {
            final int i = first + k;
            final int at = i * MMSGHDR_SIZE;
            // msg_len is what was copied, so a truncated datagram (MSG_TRUNC in msg_flags) reports the whole slot
            final int length = Math.min(h.getInt(at + MSG_LEN), slotSize);
            final InetSocketAddress from = sender(namesOffset + i * NAME_SIZE);
            h.putInt(at + MSG_NAMELEN, NAME_SIZE); // the kernel wrote the sender's length there
            final int segment = whole ? segmentSize(at, controlOffset + i * CONTROL_SIZE) : 0;
            final long slot = batch.slotAddress(i);
            // one entry for a datagram that came alone; a truncated one (a full slot) goes whole, as do those that
            // need more room than is left
            if (segment <= 0 || length <= segment || length >= slotSize
                    || (length + segment - 1) / segment > batch.room()) {
                batch.addSegment(slot, length, 0, from, on);
                continue;
            }
            int index = 0;
            for (int offset = 0; offset < length; offset += segment) {
                batch.addSegment(slot + offset, Math.min(segment, length - offset), index++, from, on);
            }
        }
        return batch.count() - first;
    }

    /**
     * The segment size the kernel gave in header {@code at}'s cmsg (UDP_GRO), or 0 if the datagram came alone; makes
     * the cmsg room whole again for the next call.
     */
    private int segmentSize(final int at, final int control) {
        final UnsafeBuffer h = headers;
        final long used = h.getLong(at + MSG_CONTROLLEN);
        int size = 0;
        if (used >= NativeSocket.CMSG_DATA + 4 && h.getInt(control + NativeSocket.CMSG_LEVEL) == NativeSocket.SOL_UDP
                && h.getInt(control + NativeSocket.CMSG_TYPE) == NativeSocket.UDP_GRO) {
            size = h.getInt(control + NativeSocket.CMSG_DATA);
        }
        h.putLong(at + MSG_CONTROLLEN, CONTROL_SIZE);
        return size;
    }

    /** Lays out one header per slot of {@code b}; called again only if the engine hands over another batch. */
    private void bind(final RxBatch b) {
        final int cap = b.capacity();
        final int iovOffset = cap * MMSGHDR_SIZE;
        namesOffset = iovOffset + cap * IOVEC_SIZE;
        controlOffset = namesOffset + cap * NAME_SIZE;
        final ByteBuffer mem = BufferUtil.allocateDirectAligned(controlOffset + (whole ? cap * CONTROL_SIZE : 0), 64);
        final UnsafeBuffer h = new UnsafeBuffer(mem);
        final long base = h.addressOffset();
        for (int i = 0; i < cap; i++) {
            final int at = i * MMSGHDR_SIZE;
            h.putLong(at + MSG_NAME, base + namesOffset + (long) i * NAME_SIZE);
            h.putInt(at + MSG_NAMELEN, NAME_SIZE);
            h.putLong(at + MSG_IOV, base + iovOffset + (long) i * IOVEC_SIZE);
            h.putLong(at + MSG_IOVLEN, 1);
            h.putLong(iovOffset + i * IOVEC_SIZE, b.slotAddress(i));
            h.putLong(iovOffset + i * IOVEC_SIZE + IOV_LEN, b.slotSize());
            if (whole) {
                h.putLong(at + MSG_CONTROL, base + controlOffset + (long) i * CONTROL_SIZE);
                h.putLong(at + MSG_CONTROLLEN, CONTROL_SIZE);
            }
        }
        this.headers = h;
        this.headersAddress = base;
        this.batch = b;
    }

    /** The sender whose struct sockaddr is at {@code at}: from the cache, or made and cached. */
    private InetSocketAddress sender(final int at) {
        final UnsafeBuffer h = headers;
        final int family = h.getShort(at) & 0xFFFF;
        final int port = h.getShort(at + SIN_PORT, java.nio.ByteOrder.BIG_ENDIAN) & 0xFFFF;
        final long hi;
        final long lo;
        final int scope;
        if (family == AF_INET) {
            hi = 0;
            lo = h.getInt(at + SIN_ADDR, java.nio.ByteOrder.BIG_ENDIAN) & 0xFFFF_FFFFL;
            scope = 0;
        } else {
            hi = h.getLong(at + SIN6_ADDR, java.nio.ByteOrder.BIG_ENDIAN);
            lo = h.getLong(at + SIN6_ADDR + 8, java.nio.ByteOrder.BIG_ENDIAN);
            scope = h.getInt(at + SIN6_SCOPE_ID);
        }
        final InetSocketAddress cached = senders.find(family, hi, lo, port, scope);
        return cached != null ? cached : senders.add(family, hi, lo, port, scope, make(family, at, port, scope));
    }

    /** A socket address as the JDK's receive makes it (an IPv4-mapped IPv6 address becomes an IPv4 one). */
    private InetSocketAddress make(final int family, final int at, final int port, final int scope) {
        final byte[] a = new byte[family == AF_INET ? 4 : 16];
        headers.getBytes(family == AF_INET ? at + SIN_ADDR : at + SIN6_ADDR, a);
        try {
            final InetAddress addr = scope != 0 ? Inet6Address.getByAddress(null, a, scope) : InetAddress.getByAddress(a);
            return new InetSocketAddress(addr, port);
        } catch (final UnknownHostException e) {
            throw new IllegalStateException("sender address of " + a.length + " bytes", e); // lengths are 4 or 16
        }
    }
}
