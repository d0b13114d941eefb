package io.jhca.benchmarks;

import io.jhca.rxe.link.Link;
import io.jhca.rxe.link.LinkOpener;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

/**
 * Two rxe links joined in memory, for benchmarks that time the Java stacks without the kernel: what one end sends,
 * the other receives, in order, copied through a fixed ring of slots (no allocation). Single-threaded: one thread
 * drives both devices. A full ring refuses the datagram, as a full socket buffer does.
 */
final class MemoryLinkPair {
    private static final int SLOTS = 64;
    private static final int SLOT_SIZE = 4096 + 128;

    private final End first;
    private final End second;

    MemoryLinkPair(String firstHost, String secondHost) {
        first = new End(new InetSocketAddress(firstHost, 4791));
        second = new End(new InetSocketAddress(secondHost, 4791));
        first.peer = second;
        second.peer = first;
    }

    /** Opens the first end for the device at {@code firstHost}. */
    LinkOpener first() {
        return local -> first;
    }

    LinkOpener second() {
        return local -> second;
    }

    private static final class End implements Link {
        private final InetSocketAddress self;
        private final ByteBuffer ring = ByteBuffer.allocateDirect(SLOTS * SLOT_SIZE);
        private final int[] lengths = new int[SLOTS];
        private long head;
        private long tail;
        private End peer;

        End(InetSocketAddress self) {
            this.self = self;
        }

        @Override
        public boolean send(ByteBuffer datagram, InetSocketAddress to) {
            return peer.accept(datagram);
        }

        /** Queues a datagram from the peer; false if the ring is full or it does not fit a slot. */
        private boolean accept(ByteBuffer datagram) {
            int length = datagram.remaining();
            if (tail - head == SLOTS || length > SLOT_SIZE) {
                return false;
            }
            int slot = (int) (tail % SLOTS);
            ring.put(slot * SLOT_SIZE, datagram, datagram.position(), length);
            datagram.position(datagram.limit());
            lengths[slot] = length;
            tail++;
            return true;
        }

        @Override
        public InetSocketAddress receive(ByteBuffer buffer) {
            if (head == tail) {
                return null;
            }
            int slot = (int) (head % SLOTS);
            int length = Math.min(lengths[slot], buffer.remaining());
            buffer.put(buffer.position(), ring, slot * SLOT_SIZE, length);
            buffer.position(buffer.position() + length);
            head++;
            return peer.self;
        }

        @Override
        public InetSocketAddress localAddress() {
            return self;
        }

        @Override
        public void close() {
        }
    }
}
