package io.jhca.benchmarks;

import io.jhca.benchmarks.BareRoce.Mem;

import static io.jhca.benchmarks.BareRoce.MAX_PACKET;

/**
 * roce_write_lat.c's memory mode: a datagram is copied straight into the peer's inbox (its receive buffer), a GSO
 * pair's segments one after the other, as the kernel hands a UDP_GRO socket a coalesced one; no kernel. Both sides in
 * one thread, which must receive each datagram before the next is sent: an inbox holds one, and an empty inbox throws
 * (the loop is out of step) where the C would spin forever.
 */
final class MemoryHandOver implements BareRoce.HandOver {
    private final Mem inbox = new Mem(2 * MAX_PACKET);
    private int inboxLen;
    /** The first segment's length if the datagram is a GSO pair, else 0 (UDP_GRO's cmsg). */
    private int inboxSegment;
    private MemoryHandOver peer;

    static void pair(MemoryHandOver a, MemoryHandOver b) {
        a.peer = b;
        b.peer = a;
    }

    @Override
    public void send(Mem from, int len, int ackAt, int ackLen) {
        MemoryHandOver to = peer;
        if (to.inboxLen != 0) {
            throw new IllegalStateException("the peer has not taken its last datagram");
        }
        to.inbox.buf.putBytes(0, from.buf, 0, len);
        if (ackLen != 0) {
            to.inbox.buf.putBytes(len, from.buf, ackAt, ackLen);
        }
        to.inboxLen = len + ackLen;
        to.inboxSegment = ackLen != 0 ? len : 0;
    }

    @Override
    public void receive(BareRoce side) {
        int n = inboxLen;
        if (n == 0) {
            throw new IllegalStateException("nothing to receive: the loop is out of step");
        }
        inboxLen = 0;
        side.onDatagram(inbox, n, inboxSegment);
    }
}
