package io.jhca.rxe.link;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Packet I/O of a software RoCEv2 device: whole UDP payloads (BTH .. ICRC) to and from IP peers. Non-blocking
 * both ways; used by one thread at a time (the device's engine).
 */
public interface Link extends AutoCloseable {

    /**
     * Sends {@code datagram}'s bytes from its position to its limit as one UDP datagram to {@code peer}
     * (address and UDP port, normally 4791). Returns false if the datagram was not handed to the network
     * (no room, an error): an RC packet is then treated as lost and recovered by retransmission; a UD or UC packet,
     * which nothing would retransmit, is sent again in the engine's next cycle (as Linux rxe retries -EAGAIN).
     */
    boolean send(ByteBuffer datagram, InetSocketAddress peer);

    /**
     * Receives one datagram into {@code buffer} at its position (the position advances by its length) and
     * returns where it came from, or null when nothing is waiting. A datagram longer than the room left is
     * truncated, so offer a buffer larger than any valid packet and treat a full buffer as malformed.
     */
    InetSocketAddress receive(ByteBuffer buffer);

    /**
     * Receives as many waiting datagrams as fit into {@code batch}'s free slots, each with its sender and the local
     * address it arrived at, and returns how many. A socket that takes coalesced datagrams whole hands each over
     * split, one entry per segment, in order, and asks the kernel for no more than that leaves room for. This
     * default takes them one {@link #receive(ByteBuffer)} at a time
     * (the last call, finding nothing, tells that the queue is empty); a socket link takes them in one system call.
     */
    default int receive(final RxBatch batch) {
        int n = 0;
        while (batch.room() > 0) {
            final ByteBuffer slot = batch.slot(batch.count());
            final InetSocketAddress src = receive(slot);
            if (src == null) {
                break;
            }
            batch.add(slot.position(), src, lastReceivedOn());
            n++;
        }
        return n;
    }

    /**
     * The engine has handled every entry of the batch it last received into: a link that lent it memory of its own
     * for them (a packet ring's frames) may take that back. Called by the thread that handled them, under the
     * engine's lock; this default does nothing.
     */
    default void handled() {
    }

    /** The local address and UDP port the link is bound to. */
    InetSocketAddress localAddress();

    /**
     * Every local address the link receives on, in a fixed order (a device on a network interface has one per
     * address of the interface); the index into this list names the source of {@link #send(ByteBuffer,
     * InetSocketAddress, int)} and is what {@link #lastReceivedOn()} returns. A single-address link: its own.
     */
    default List<InetSocketAddress> localAddresses() {
        return List.of(localAddress());
    }

    /** Index in {@link #localAddresses()} of the address the datagram last returned by receive arrived at. */
    default int lastReceivedOn() {
        return 0;
    }

    /** {@link #send(ByteBuffer, InetSocketAddress)} from the local address at index {@code from}. */
    default boolean send(final ByteBuffer datagram, final InetSocketAddress peer, final int from) {
        return send(datagram, peer);
    }

    /** {@link #sendPair}'s result bit: the first datagram was handed to the network. */
    int FIRST_SENT = 1;
    /** {@link #sendPair}'s result bit: the second datagram was handed to the network. */
    int SECOND_SENT = 2;

    /**
     * Sends {@code first}, then {@code second}, each from its position to its limit, as two datagrams to {@code peer}
     * from the local address at index {@code from}, in that order; a socket link hands both to the kernel in one
     * system call. Returns {@link #FIRST_SENT} and {@link #SECOND_SENT} or-ed for those handed to the network; the
     * second is tried even if the first was refused. This default is two {@link #send(ByteBuffer, InetSocketAddress,
     * int)} calls.
     */
    default int sendPair(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer, final int from) {
        final int a = send(first, peer, from) ? FIRST_SENT : 0;
        return a | (send(second, peer, from) ? SECOND_SENT : 0);
    }

    /**
     * Whether {@link #sendCoalesced} sends datagrams of these lengths from the local address at index {@code from} as
     * one: a UDP GSO send on a socket bound to a loopback address, which the receiving socket takes whole (UDP_GRO) or
     * the kernel splits at it. Split, the second datagram carries IPv4 Identification 1 (the first 0: Linux
     * inet_gso_segment numbers segments on from the first's ID), so its ICRC must be computed with ID 1. Needs the
     * first at least as long as the second (GSO segments all have the first's size but the last), and a second that
     * is not empty. This default: never.
     */
    default boolean sendsCoalesced(final int firstLength, final int secondLength, final int from) {
        return false;
    }

    /**
     * Sends {@code first} and {@code second} to {@code peer} as one GSO datagram when {@link #sendsCoalesced} said so
     * for their lengths, else as {@link #sendPair}. Returns {@link #FIRST_SENT} and {@link #SECOND_SENT}: both or
     * neither for a coalesced send.
     */
    default int sendCoalesced(final ByteBuffer first, final ByteBuffer second, final InetSocketAddress peer,
            final int from) {
        return sendPair(first, second, peer, from);
    }

    /** Most segments a {@link #sendBurst burst} may hold: every receiver of one keeps room for this many entries. */
    int MAX_BURST_SEGMENTS = 4;

    /**
     * Most bytes a {@link #sendBurst burst} from the local address at index {@code from} may hold, or 0 if this link
     * sends none. This default: 0.
     */
    default int maxBurst(final int from) {
        return 0;
    }

    /**
     * Sends the datagrams in {@code burst} (position to limit) to {@code peer} as one UDP GSO datagram of segments of
     * {@code segmentSize} bytes, the last one no longer, at most {@link #MAX_BURST_SEGMENTS} and {@link #maxBurst}
     * bytes: one trip through the kernel's stack for a run of a message's packets. As with {@link #sendsCoalesced},
     * segment {@code i} carries IPv4 Identification {@code i} when split, so its ICRC is computed with that ID. Both or
     * neither: returns whether the kernel took it. This default, for links without bursts: false.
     */
    default boolean sendBurst(final ByteBuffer burst, final int segmentSize, final InetSocketAddress peer,
            final int from) {
        return false;
    }

    /**
     * The file descriptors an idle engine may sleep on until a datagram arrives ({@link KernelWait}): written into
     * {@code into} if they fit; returns how many there are, or -1 if this link has nothing to wait on that covers
     * everything it could deliver (the engine then parks for its time). Engine thread only.
     */
    default int pollFds(final int[] into) {
        return -1;
    }

    /**
     * Nanoseconds from {@code now} (System.nanoTime) until this link has something to send or deliver by time alone
     * (a packet it held back), {@link Long#MAX_VALUE} if nothing: an idle engine sleeps no longer than that.
     * Engine thread only.
     */
    default long nanosToNextRelease(final long now) {
        return Long.MAX_VALUE;
    }

    /**
     * How the link takes datagrams in, for banners and diagnostics: a UDP link says "packet ring" or "socket" (with
     * why not a ring where one was asked for). This default: "socket".
     */
    default String receivePath() {
        return "socket";
    }

    @Override
    void close();

    /**
     * Joins the IP multicast group {@code group} on the link's interface (IGMP / MLD), so datagrams sent to
     * {@code group}:4791 come in through {@link #receiveGroup}. Joining a group already joined does nothing.
     */
    default void joinGroup(InetAddress group) {
        throw new UnsupportedOperationException("this link has no multicast");
    }

    /** Leaves a group joined with {@link #joinGroup}; no more of its datagrams come in. */
    default void leaveGroup(InetAddress group) {
    }

    /**
     * Receives one datagram sent to a joined group, as {@link #receive}; {@link #lastGroup()} then names its group.
     * Null when none is waiting.
     */
    default InetSocketAddress receiveGroup(ByteBuffer buffer) {
        return null;
    }

    /** The group (the very object given to {@link #joinGroup}) of the datagram {@link #receiveGroup} returned last. */
    default InetAddress lastGroup() {
        return null;
    }
}
