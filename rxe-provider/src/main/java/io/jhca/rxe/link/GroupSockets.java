package io.jhca.rxe.link;

import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.MembershipKey;
import java.util.Arrays;

/**
 * The receive side of a link's multicast groups: one UDP socket per joined group, bound to {@code group:4791} and
 * a member of the group on the device's interface.
 *
 * <p>Why a socket per group: the device's own socket is bound to its unicast address, and Linux delivers a UDP
 * datagram only to sockets whose bound address is the datagram's destination or the wildcard
 * (__udp4_lib_mcast_deliver matches the bound address). A wildcard socket on 4791 would also take the unicast
 * traffic of every other device on the host, so each group gets a socket bound to the group address itself, with
 * SO_REUSEADDR so that every device of the host (and every process) can bind it too: the kernel hands each such
 * socket its own copy. IP_MULTICAST_ALL is cleared so a socket takes only the groups it joined itself
 * (linux/in.h; its default 1 would deliver a group some other socket joined). On the loopback interface this works
 * as on any other (tested: devices on 127.0.0.1 and 127.0.0.2 in one network namespace each get every datagram).
 *
 * <p>Control path (join, leave) and engine thread (receive) are the same thread: the engine runs both.
 */
final class GroupSockets implements AutoCloseable {

    private final InetAddress local;
    private final int port;
    private final int socketBuffer;
    private InetAddress[] groups = new InetAddress[0];
    private DatagramChannel[] channels = new DatagramChannel[0];
    private MembershipKey[] keys = new MembershipKey[0];
    private int[] fds = new int[0];
    private int next;
    private InetAddress last;

    GroupSockets(final InetAddress local, final int port, final int socketBuffer) {
        this.local = local;
        this.port = port;
        this.socketBuffer = socketBuffer;
    }

    /**
     * The interface of the device's address, where groups are joined and multicast is sent: the one holding it, else
     * the one whose subnet covers it (127.0.0.2 is not assigned to lo, yet lo's 127.0.0.1/8 routes it there).
     */
    static NetworkInterface interfaceOf(final InetAddress address) {
        final NetworkInterface ni = findInterface(address);
        if (ni == null) {
            throw new IllegalStateException("no network interface holds or routes " + address.getHostAddress()
                    + " on its subnet");
        }
        return ni;
    }

    /** As {@link #interfaceOf}, null if none. */
    static NetworkInterface findInterface(final InetAddress address) {
        try {
            final NetworkInterface holder = NetworkInterface.getByInetAddress(address);
            if (holder != null) {
                return holder;
            }
            final byte[] a = address.getAddress();
            for (final NetworkInterface ni : java.util.Collections.list(NetworkInterface.getNetworkInterfaces())) {
                for (final java.net.InterfaceAddress ia : ni.getInterfaceAddresses()) {
                    final byte[] net = ia.getAddress().getAddress();
                    if (net.length == a.length && samePrefix(net, a, ia.getNetworkPrefixLength())) {
                        return ni;
                    }
                }
            }
            return null;
        } catch (final IOException e) {
            throw new IllegalStateException("cannot list the network interfaces: " + e, e);
        }
    }

    private static boolean samePrefix(final byte[] x, final byte[] y, final int bits) {
        for (int i = 0; i < bits; i++) {
            final int mask = 0x80 >>> (i & 7);
            if ((x[i >> 3] & mask) != (y[i >> 3] & mask)) {
                return false;
            }
        }
        return true;
    }

    void join(final InetAddress group) {
        if (indexOf(group) >= 0) {
            return;
        }
        if (!group.isMulticastAddress()) {
            throw new IllegalArgumentException(group.getHostAddress() + " is not an IP multicast address");
        }
        if ((group instanceof Inet4Address) != (local instanceof Inet4Address)) {
            throw new IllegalArgumentException("group " + group.getHostAddress() + " is not of the address family of "
                    + local.getHostAddress());
        }
        final boolean v4 = group instanceof Inet4Address;
        DatagramChannel ch = null;
        try {
            ch = DatagramChannel.open(v4 ? StandardProtocolFamily.INET : StandardProtocolFamily.INET6);
            ch.configureBlocking(false);
            ch.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            SocketBuffers.apply(ch, socketBuffer);
            final NetworkInterface ni = interfaceOf(local);
            ch.bind(new InetSocketAddress(scoped(group, ni), port));
            final int fd = NativeSocket.fd(ch);
            if (v4) {
                NativeSocket.setInt(fd, NativeSocket.IPPROTO_IP, NativeSocket.IP_MULTICAST_ALL, 0, "IP_MULTICAST_ALL=0");
            } else {
                NativeSocket.setInt(fd, NativeSocket.IPPROTO_IPV6, NativeSocket.IPV6_MULTICAST_ALL, 0,
                        "IPV6_MULTICAST_ALL=0");
                NativeSocket.setInt(fd, NativeSocket.SOL_UDP, NativeSocket.UDP_NO_CHECK6_RX, 1, "UDP_NO_CHECK6_RX");
            }
            final MembershipKey key = ch.join(group, ni);
            final int n = groups.length;
            groups = Arrays.copyOf(groups, n + 1);
            channels = Arrays.copyOf(channels, n + 1);
            keys = Arrays.copyOf(keys, n + 1);
            fds = Arrays.copyOf(fds, n + 1);
            groups[n] = group;
            channels[n] = ch;
            keys[n] = key;
            fds[n] = fd;
        } catch (final IOException | RuntimeException e) {
            closeQuietly(ch);
            throw new IllegalStateException("cannot join multicast group " + group.getHostAddress() + " on the"
                    + " interface of " + local.getHostAddress() + ": " + e.getMessage(), e);
        }
    }

    /**
     * The address to bind for {@code group}: an IPv6 group of interface- or link-local scope (ff01::/16, ff02::/16,
     * ff12::/16, ...) with the interface as its scope id, since Linux refuses to bind a link-local address without one
     * (inet6_bind: EINVAL); any other group as it is.
     */
    static InetAddress scoped(final InetAddress group, final NetworkInterface ni) throws java.net.UnknownHostException {
        if (group instanceof java.net.Inet6Address && (group.isMCLinkLocal() || group.isMCNodeLocal())) {
            return java.net.Inet6Address.getByAddress(null, group.getAddress(), ni);
        }
        return group;
    }

    void leave(final InetAddress group) {
        final int i = indexOf(group);
        if (i < 0) {
            return;
        }
        keys[i].drop();
        closeQuietly(channels[i]);
        final int n = groups.length - 1;
        groups[i] = groups[n];
        channels[i] = channels[n];
        keys[i] = keys[n];
        fds[i] = fds[n];
        groups = Arrays.copyOf(groups, n);
        channels = Arrays.copyOf(channels, n);
        keys = Arrays.copyOf(keys, n);
        fds = Arrays.copyOf(fds, n);
        next = 0;
    }

    /** One datagram from any group socket, taking them in turn so that no group starves another. */
    InetSocketAddress receive(final ByteBuffer buffer) {
        final int n = channels.length;
        for (int k = 0; k < n; k++) {
            final int i = next;
            next = next + 1 == n ? 0 : next + 1;
            final InetSocketAddress src;
            try {
                src = (InetSocketAddress) channels[i].receive(buffer);
            } catch (final IOException e) {
                continue;
            }
            if (src != null) {
                last = groups[i];
                return src;
            }
        }
        return null;
    }

    /** The group sockets' descriptors, written from {@code into[at]} on where they fit; returns how many. */
    int pollFds(final int[] into, final int at) {
        for (int i = 0; i < fds.length && at + i < into.length; i++) {
            into[at + i] = fds[i];
        }
        return fds.length;
    }

    InetAddress last() {
        return last;
    }

    private int indexOf(final InetAddress group) {
        for (int i = 0; i < groups.length; i++) {
            if (groups[i].equals(group)) {
                return i;
            }
        }
        return -1;
    }

    private static void closeQuietly(final DatagramChannel ch) {
        if (ch == null) {
            return;
        }
        try {
            ch.close();
        } catch (final IOException e) {
            // nothing more to release
        }
    }

    @Override
    public void close() {
        for (final DatagramChannel ch : channels) {
            closeQuietly(ch);
        }
        groups = new InetAddress[0];
        channels = new DatagramChannel[0];
        keys = new MembershipKey[0];
        fds = new int[0];
    }
}
