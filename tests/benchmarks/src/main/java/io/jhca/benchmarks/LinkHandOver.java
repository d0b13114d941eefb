package io.jhca.benchmarks;

import io.jhca.benchmarks.BareRoce.Mem;
import io.jhca.rxe.link.Link;
import io.jhca.rxe.link.RxBatch;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * roce_write_lat.c's socket mode over jhca's link layer, the thin syscall layer its engine uses: a datagram leaves by
 * {@link Link#send(ByteBuffer, InetSocketAddress, int)}, a GSO pair by {@link Link#sendCoalesced} (the kernel numbers
 * the segments' IPv4 IDs 0 and 1, which the ICRCs were computed with), and arrives by {@link Link#receive(RxBatch)},
 * a coalesced one split into its segments. The C's sockets are connected, the link's are not (it names the peer in
 * every send), as jhca's engine's.
 *
 * <p>Every datagram is one the loop waits for: nothing resends a lost one. So a refused send, a pair the link would
 * not coalesce (the ACK's ICRC would then be wrong), or a packet the side dropped fails at once, where the C would
 * count it (or not notice) and wait forever.
 */
final class LinkHandOver implements BareRoce.HandOver {
    /** A page: any packet of the loop, or a pair, fits with room to spare (a full slot would mean truncation). */
    private static final int SLOT = 4096;

    private final Link link;
    private final InetSocketAddress peer;
    /**
     * {@link Link#MAX_BURST_SEGMENTS} slots: on a UDP_GRO socket the link asks for that share of the room, so one
     * datagram a call, always into slot 0, and room for the entries of its segments.
     */
    private final RxBatch batch = new RxBatch(Link.MAX_BURST_SEGMENTS, SLOT);
    private final Mem slot = new Mem(batch.slot(0));
    private final long slotAddress = batch.slotAddress(0);
    /** Views of the side's send buffer: the datagram (or a pair's first) and a pair's second. */
    private Mem viewed;
    private ByteBuffer first;
    private ByteBuffer second;

    LinkHandOver(Link link, InetSocketAddress peer) {
        this.link = link;
        this.peer = peer;
    }

    @Override
    public void send(Mem from, int len, int ackAt, int ackLen) {
        if (from != viewed) {   // once: the side always sends from the same buffer
            first = from.bytes.duplicate();
            second = from.bytes.duplicate();
            viewed = from;
        }
        first.limit(len).position(0);
        if (ackLen == 0) {
            if (!link.send(first, peer, 0)) {
                throw new IllegalStateException("the link refused a datagram");
            }
            return;
        }
        second.limit(ackAt + ackLen).position(ackAt);
        if (!link.sendsCoalesced(len, ackLen, 0)) {
            throw new IllegalStateException("the link does not send " + len + " + " + ackLen + " bytes as one GSO"
                    + " datagram: the ACK's ICRC was computed for IPv4 ID 1");
        }
        if (link.sendCoalesced(first, second, peer, 0) != (Link.FIRST_SENT | Link.SECOND_SENT)) {
            throw new IllegalStateException("the link refused a GSO pair");
        }
    }

    @Override
    public void receive(BareRoce side) {
        RxBatch b = batch;
        b.clear();
        int n = link.receive(b);
        for (int i = 0; i < n; i++) {
            // a coalesced datagram's segment i carried IPv4 ID i (its first's being 0); one alone is segment 0
            side.onPacket(slot, (int) (b.address(i) - slotAddress), b.length(i), b.segment(i));
        }
        if (side.drops != 0) {
            throw new IllegalStateException(side.drops + " packets dropped (ICRC or header check): nothing resends"
                    + " them, the loop would wait forever");
        }
    }
}
