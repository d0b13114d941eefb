package io.jhca.rxe.link;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * RoCEv2 on every address of a network interface: one {@link UdpLink} per address (IPv4 and IPv6, port 4791), as
 * Linux rxe receives on every address of its netdev. A UDP socket does not say which of the host's addresses a
 * datagram was sent to, so a socket per address is what tells the engine the destination address its ICRC covers;
 * sends leave from the socket of the address the QP's source GID names.
 *
 * <p>Receive takes turns over the sockets (the one after the last that delivered goes first), so a busy address
 * cannot starve another. Used by the engine's thread only.
 *
 * <p>Multicast: a group is joined through the first address of its IP version (an IPv4 group with the IPv4
 * address, an IPv6 group with the first IPv6 one); all addresses sit on the one interface, where the join happens.
 */
public final class MultiUdpLink implements Link {

    private final UdpLink[] links;
    private final List<InetSocketAddress> locals;
    private int next;
    private int lastOn;
    /** Groups joined, each with the index of the address (link) that joined it. */
    private final java.util.Map<InetAddress, Integer> joined = new java.util.HashMap<>();
    private int nextGroupLink;
    private int lastGroupOn;

    private MultiUdpLink(final UdpLink[] links) {
        this.links = links;
        final List<InetSocketAddress> l = new ArrayList<>();
        for (final UdpLink u : links) {
            l.add(u.localAddress());
        }
        this.locals = Collections.unmodifiableList(l);
    }

    /**
     * Binds every address of {@code locals} (each with its UDP port); on any failure the sockets already open are
     * closed and the failure names the address.
     */
    public static MultiUdpLink open(final List<InetSocketAddress> locals, final int socketBuffer) {
        return open(locals, socketBuffer, true);
    }

    /** {@link #open(List, int)}; {@code coalesce} as {@link UdpLink#open(InetSocketAddress, int, boolean)}'s. */
    public static MultiUdpLink open(final List<InetSocketAddress> locals, final int socketBuffer,
            final boolean coalesce) {
        return open(locals, socketBuffer, coalesce, true);
    }

    /** {@link #open(List, int, boolean)}; {@code ring} as {@link UdpLink#open(InetSocketAddress, int, boolean, boolean)}'s. */
    public static MultiUdpLink open(final List<InetSocketAddress> locals, final int socketBuffer,
            final boolean coalesce, final boolean ring) {
        if (locals.isEmpty()) {
            throw new IllegalStateException("no address to bind");
        }
        final UdpLink[] links = new UdpLink[locals.size()];
        try {
            for (int i = 0; i < links.length; i++) {
                links[i] = UdpLink.open(locals.get(i), socketBuffer, coalesce, ring);
            }
        } catch (final RuntimeException e) {
            for (final UdpLink u : links) {
                if (u != null) {
                    u.close();
                }
            }
            throw e;
        }
        return new MultiUdpLink(links);
    }

    @Override
    public boolean send(final ByteBuffer datagram, final InetSocketAddress peer) {
        return links[0].send(datagram, peer);
    }

    @Override
    public boolean send(final ByteBuffer datagram, final InetSocketAddress peer, final int from) {
        return links[from].send(datagram, peer);
    }

    @Override
    public int sendPair(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer, final int from) {
        return links[from].sendPair(first, second, peer, from);
    }

    @Override
    public boolean sendsCoalesced(final int firstLength, final int secondLength, final int from) {
        return links[from].sendsCoalesced(firstLength, secondLength, from);
    }

    @Override
    public int sendCoalesced(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer,
            final int from) {
        return links[from].sendCoalesced(first, second, peer, from);
    }

    @Override
    public int maxBurst(final int from) {
        return links[from].maxBurst(from);
    }

    @Override
    public boolean sendBurst(final ByteBuffer burst, final int segmentSize, final InetSocketAddress peer,
            final int from) {
        return links[from].sendBurst(burst, segmentSize, peer, from);
    }

    @Override
    public InetSocketAddress receive(final ByteBuffer buffer) {
        final int n = links.length;
        for (int k = 0; k < n; k++) {
            final int i = next;
            next = i + 1 == n ? 0 : i + 1;
            final InetSocketAddress src = links[i].receive(buffer);
            if (src != null) {
                lastOn = i;
                return src;
            }
        }
        return null;
    }

    /** Each address's waiting datagrams in one system call, taking turns as {@link #receive(ByteBuffer)} does. */
    @Override
    public int receive(final RxBatch batch) {
        final int n = links.length;
        int got = 0;
        for (int k = 0; k < n && batch.room() > 0; k++) {
            final int i = next;
            next = i + 1 == n ? 0 : i + 1;
            got += links[i].receive(batch, i);
        }
        return got;
    }

    @Override
    public void joinGroup(final InetAddress group) {
        if (joined.containsKey(group)) {
            return;
        }
        final boolean v4 = group instanceof Inet4Address;
        for (int i = 0; i < links.length; i++) {
            if ((locals.get(i).getAddress() instanceof Inet4Address) == v4) {
                links[i].joinGroup(group);
                joined.put(group, i);
                return;
            }
        }
        throw new IllegalArgumentException("group " + group.getHostAddress() + ": the interface has no IPv"
                + (v4 ? "4" : "6") + " address of this device to join it with");
    }

    @Override
    public void leaveGroup(final InetAddress group) {
        final Integer i = joined.remove(group);
        if (i != null) {
            links[i].leaveGroup(group);
        }
    }

    @Override
    public InetSocketAddress receiveGroup(final ByteBuffer buffer) {
        if (joined.isEmpty()) {
            return null;
        }
        final int n = links.length;
        for (int k = 0; k < n; k++) {
            final int i = nextGroupLink;
            nextGroupLink = i + 1 == n ? 0 : i + 1;
            final InetSocketAddress src = links[i].receiveGroup(buffer);
            if (src != null) {
                lastGroupOn = i;
                return src;
            }
        }
        return null;
    }

    @Override
    public InetAddress lastGroup() {
        return links[lastGroupOn].lastGroup();
    }

    /** Every address's socket and groups. */
    @Override
    public int pollFds(final int[] into) {
        int n = 0;
        for (final UdpLink u : links) {
            final int k = u.pollFds(into, n);
            if (k < 0) {
                return -1;
            }
            n += k;
        }
        return n;
    }

    @Override
    public int lastReceivedOn() {
        return lastOn;
    }

    @Override
    public InetSocketAddress localAddress() {
        return locals.get(0);
    }

    @Override
    public List<InetSocketAddress> localAddresses() {
        return locals;
    }

    @Override
    public void handled() {
        for (final UdpLink l : links) {
            l.handled();
        }
    }

    /** Each address's receive path, once each (they are alike unless a ring could be had for some only). */
    @Override
    public String receivePath() {
        final java.util.Set<String> paths = new java.util.LinkedHashSet<>();
        for (final UdpLink l : links) {
            paths.add(l.receivePath());
        }
        return String.join("; ", paths);
    }

    @Override
    public void close() {
        for (final UdpLink u : links) {
            u.close();
        }
    }
}
