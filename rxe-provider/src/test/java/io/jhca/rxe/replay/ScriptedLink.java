package io.jhca.rxe.replay;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

import io.jhca.rxe.link.Link;

/**
 * A link without sockets: the test queues datagrams "from" any address (here the captured peer's), the device
 * receives them in order, and everything the device sends is kept for comparison with the capture.
 */
final class ScriptedLink implements Link {

    /** One datagram the device sent: its bytes (BTH .. ICRC) and where to. */
    static final class Sent {
        final byte[] bytes;
        final InetSocketAddress peer;

        Sent(final byte[] bytes, final InetSocketAddress peer) {
            this.bytes = bytes;
            this.peer = peer;
        }
    }

    private final InetSocketAddress local;
    private final ArrayDeque<byte[]> inbox = new ArrayDeque<>();
    private final ArrayDeque<InetSocketAddress> inboxFrom = new ArrayDeque<>();
    final List<Sent> sent = new ArrayList<>();
    private volatile boolean closed;

    ScriptedLink(final InetSocketAddress local) {
        this.local = local;
    }

    synchronized void offer(final byte[] datagram, final InetSocketAddress from) {
        inbox.add(datagram.clone());
        inboxFrom.add(from);
    }

    synchronized int sentCount() {
        return sent.size();
    }

    synchronized Sent sent(final int i) {
        return sent.get(i);
    }

    @Override
    public synchronized boolean send(final ByteBuffer datagram, final InetSocketAddress peer) {
        if (closed) {
            return false;
        }
        final byte[] b = new byte[datagram.remaining()];
        datagram.duplicate().get(b);
        sent.add(new Sent(b, peer));
        return true;
    }

    @Override
    public synchronized InetSocketAddress receive(final ByteBuffer buffer) {
        final byte[] next = inbox.poll();
        if (next == null) {
            return null;
        }
        // as a datagram socket does: what does not fit is cut off
        buffer.put(next, 0, Math.min(next.length, buffer.remaining()));
        return inboxFrom.poll();
    }

    @Override
    public InetSocketAddress localAddress() {
        return local;
    }

    @Override
    public void close() {
        closed = true;
    }
}
