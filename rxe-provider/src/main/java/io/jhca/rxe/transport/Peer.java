package io.jhca.rxe.transport;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * An IP endpoint as the transport needs it, decoded once on the control path: the socket address to send to
 * (cached so that sending allocates nothing) and the address as big-endian numbers for ICRCs and checks.
 */
public final class Peer {
    private final InetSocketAddress socketAddress;
    private final boolean ipv4;
    /** IPv4 address, big-endian as an int (10.0.0.1 = 0x0A000001). */
    private final int ipv4Address;
    /** IPv6 address bytes 0-7 and 8-15, big-endian (IPv4: the IPv4-mapped form). */
    private final long hi;
    private final long lo;
    /** Index of the device's local address packets to this peer are sent from (its link's localAddresses()). */
    private final int via;

    public Peer(final InetSocketAddress socketAddress) {
        this(socketAddress, 0);
    }

    /** A destination reached from the device's local address number {@code via} (the source GID's address). */
    public Peer(final InetSocketAddress socketAddress, final int via) {
        if (via < 0) {
            throw new IllegalArgumentException("local address index " + via + " < 0");
        }
        this.via = via;
        this.socketAddress = socketAddress;
        final InetAddress a = socketAddress.getAddress();
        final byte[] b = a.getAddress();
        this.ipv4 = a instanceof Inet4Address;
        if (ipv4) {
            ipv4Address = ByteBuffer.wrap(b).getInt(); // big-endian
            hi = 0;
            lo = 0xFFFF_0000_0000L | (ipv4Address & 0xFFFF_FFFFL);
        } else {
            ipv4Address = 0;
            final ByteBuffer bb = ByteBuffer.wrap(b); // big-endian
            hi = bb.getLong();
            lo = bb.getLong();
        }
    }

    public static Peer of(final InetAddress address, final int port) {
        return new Peer(new InetSocketAddress(address, port));
    }

    /** {@link #of(InetAddress, int)} sent from the device's local address number {@code via}. */
    public static Peer of(final InetAddress address, final int port, final int via) {
        return new Peer(new InetSocketAddress(address, port), via);
    }

    /** Index of the local address packets to this peer leave from. */
    public int via() {
        return via;
    }

    public InetSocketAddress socketAddress() {
        return socketAddress;
    }

    public boolean isIpv4() {
        return ipv4;
    }

    public int ipv4Address() {
        return ipv4Address;
    }

    public long hi() {
        return hi;
    }

    public long lo() {
        return lo;
    }

    /** Same IP address (ports ignored). */
    public boolean sameAddress(final Peer o) {
        return ipv4 == o.ipv4 && ipv4Address == o.ipv4Address && hi == o.hi && lo == o.lo;
    }

    @Override
    public String toString() {
        return socketAddress.toString();
    }
}
