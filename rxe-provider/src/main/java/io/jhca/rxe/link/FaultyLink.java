package io.jhca.rxe.link;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A {@link Link} that loses, duplicates, reorders, delays and corrupts packets, per direction, with a seeded
 * random generator, to exercise the transport's recovery. Held packets (delayed, reordered, duplicates) live
 * in a fixed pool of preallocated buffers; when the pool is exhausted a packet passes untouched. Held packets
 * are released by later {@link #send} and {@link #receive} calls (the engine calls receive every duty cycle).
 * Counters say what was done.
 */
public final class FaultyLink implements Link {

    /** Counter indices: {@link #counter(Direction, Fault)}. */
    public enum Fault { PASSED, DROPPED, DUPLICATED, REORDERED, DELAYED, CORRUPTED }

    public enum Direction { TX, RX }

    private static final int POOL = 64;
    private static final int SLOT_BYTES = 16 * 1024;
    private static final int FAULTS = Fault.values().length;
    /** BTH transports by the opcode's top three bits (Opcode.transport: RC 0, UC 1, RD 2, UD 3, CNP 4). */
    private static final int TRANSPORTS = 8;

    private final Link inner;
    private final LinkFaults tx;
    private final LinkFaults rx;
    private final SplittableRandom random;
    /** Engine thread only: see {@link #lastReceivedOn()}. */
    private int lastReceivedOn;
    private final AtomicLongArray counters = new AtomicLongArray(2 * FAULTS);
    /** Packets dropped or corrupted, per direction and BTH transport: a test can account for each one it lost. */
    private final AtomicLongArray lost = new AtomicLongArray(2 * TRANSPORTS);
    private final Held txHeld = new Held();
    private final Held rxHeld = new Held();

    public FaultyLink(final Link inner, final LinkFaults tx, final LinkFaults rx, final long seed) {
        this.inner = inner;
        this.tx = tx;
        this.rx = rx;
        this.random = new SplittableRandom(seed);
    }

    public Link inner() {
        return inner;
    }

    /** How often {@code fault} was applied in {@code direction}. */
    public long counter(final Direction direction, final Fault fault) {
        return counters.get(direction.ordinal() * FAULTS + fault.ordinal());
    }

    /**
     * Packets of BTH transport {@code transport} ({@code Opcode.transport} of their first byte) that this link dropped
     * or corrupted in {@code direction}: an upper bound on what it cost that transport (a flipped bit in a field the
     * ICRC masks goes unnoticed), so a test can check that every datagram it misses is one of them.
     */
    public long lost(final Direction direction, final int transport) {
        return lost.get(direction.ordinal() * TRANSPORTS + (transport & (TRANSPORTS - 1)));
    }

    /** Counts {@code fault} (DROPPED or CORRUPTED), and the packet as lost by its BTH transport. */
    private void countLost(final int dir, final Fault fault, final ByteBuffer packet, final int start,
            final int length) {
        count(dir, fault);
        if (length > 0) {
            final int i = dir * TRANSPORTS + ((packet.get(start) & 0xFF) >>> 5);
            lost.lazySet(i, lost.get(i) + 1);
        }
    }

    private void count(final int dir, final Fault fault) {
        final int i = dir * FAULTS + fault.ordinal();
        counters.lazySet(i, counters.get(i) + 1);
    }

    @Override
    public boolean send(final ByteBuffer datagram, final InetSocketAddress peer) {
        return send(datagram, peer, 0);
    }

    @Override
    public boolean send(final ByteBuffer datagram, final InetSocketAddress peer, final int from) {
        final long now = System.nanoTime();
        releaseTx(now, false);
        if (tx.isNone()) {
            return inner.send(datagram, peer, from);
        }
        final int start = datagram.position();
        final int length = datagram.remaining();
        if (chance(tx.drop())) {
            countLost(0, Fault.DROPPED, datagram, start, length);
            datagram.position(datagram.limit());
            return true;
        }
        if (chance(tx.corrupt()) && length > 0) {
            countLost(0, Fault.CORRUPTED, datagram, start, length);   // before the flip, which may hit the opcode
            flipBit(datagram, start, length);
        }
        if (chance(tx.delay()) && txHeld.hold(datagram, peer, from, now + tx.delayNanos(), false)) {
            count(0, Fault.DELAYED);
            datagram.position(datagram.limit());
            return true;
        }
        if (chance(tx.reorder()) && txHeld.hold(datagram, peer, from, now + tx.delayNanos(), true)) {
            count(0, Fault.REORDERED);
            datagram.position(datagram.limit());
            return true;
        }
        final boolean duplicate = chance(tx.duplicate());
        final boolean sent = inner.send(datagram, peer, from);
        count(0, Fault.PASSED);
        if (duplicate) {
            datagram.position(start);
            inner.send(datagram, peer, from);
            count(0, Fault.DUPLICATED);
        }
        releaseTx(now, true);
        return sent;
    }

    private void releaseTx(final long now, final boolean afterPacket) {
        for (int i = 0; i < txHeld.count; ) {
            final Slot s = txHeld.slots[i];
            if (now - s.due >= 0 || (afterPacket && s.afterNext)) {
                s.data.flip();
                inner.send(s.data, s.peer, s.local);
                txHeld.remove(i);
            } else {
                i++;
            }
        }
    }

    @Override
    public InetSocketAddress receive(final ByteBuffer buffer) {
        final long now = System.nanoTime();
        releaseTx(now, false);
        final InetSocketAddress due = rxHeld.takeDue(now, buffer);
        if (due != null) {
            lastReceivedOn = rxHeld.takenLocal;
            return due;
        }
        if (rx.isNone()) {
            final InetSocketAddress src = inner.receive(buffer);
            lastReceivedOn = inner.lastReceivedOn();
            return src;
        }
        final int start = buffer.position();
        while (true) {
            final InetSocketAddress src = inner.receive(buffer);
            if (src == null) {
                return null;
            }
            final int on = inner.lastReceivedOn();
            final int length = buffer.position() - start;
            if (chance(rx.drop())) {
                countLost(1, Fault.DROPPED, buffer, start, length);
                buffer.position(start);
                continue;
            }
            if (chance(rx.corrupt()) && length > 0) {
                countLost(1, Fault.CORRUPTED, buffer, start, length);
                flipBit(buffer, start, length);
            }
            if (chance(rx.delay()) && rxHeld.holdReceived(buffer, start, src, on, now + rx.delayNanos(), false)) {
                count(1, Fault.DELAYED);
                buffer.position(start);
                continue;
            }
            if (chance(rx.reorder()) && rxHeld.holdReceived(buffer, start, src, on, now + rx.delayNanos(), true)) {
                count(1, Fault.REORDERED);
                buffer.position(start);
                continue;
            }
            if (chance(rx.duplicate()) && rxHeld.holdReceived(buffer, start, src, on, now, false)) {
                count(1, Fault.DUPLICATED);
            }
            rxHeld.afterNextPassed(now);
            count(1, Fault.PASSED);
            lastReceivedOn = on;
            return src;
        }
    }

    private boolean chance(final double p) {
        return p > 0 && random.nextDouble() < p;
    }

    private void flipBit(final ByteBuffer b, final int start, final int length) {
        final int at = start + random.nextInt(length);
        b.put(at, (byte) (b.get(at) ^ (1 << random.nextInt(8))));
    }

    @Override
    public InetSocketAddress localAddress() {
        return inner.localAddress();
    }

    @Override
    public java.util.List<InetSocketAddress> localAddresses() {
        return inner.localAddresses();
    }

    @Override
    public int lastReceivedOn() {
        return lastReceivedOn;
    }

    /**
     * The inner link's sockets: a datagram that arrives still ends an idle engine's sleep. What this link holds back
     * (delayed, reordered) is released by time: {@link #nanosToNextRelease} tells the engine how long it may sleep.
     */
    @Override
    public int pollFds(final int[] into) {
        return inner.pollFds(into);
    }

    /** Until the first held packet (either direction) is due; a duplicate waiting to be delivered is due now. */
    @Override
    public long nanosToNextRelease(final long now) {
        return Math.min(txHeld.nanosToFirstDue(now), rxHeld.nanosToFirstDue(now));
    }

    @Override
    public void handled() {
        inner.handled();
    }

    @Override
    public String receivePath() {
        return inner.receivePath() + ", one datagram at a time with faults injected";
    }

    @Override
    public void close() {
        inner.close();
    }

    // multicast datagrams pass through untouched: the faults apply to the unicast path

    @Override
    public void joinGroup(final java.net.InetAddress group) {
        inner.joinGroup(group);
    }

    @Override
    public void leaveGroup(final java.net.InetAddress group) {
        inner.leaveGroup(group);
    }

    @Override
    public InetSocketAddress receiveGroup(final ByteBuffer buffer) {
        return inner.receiveGroup(buffer);
    }

    @Override
    public java.net.InetAddress lastGroup() {
        return inner.lastGroup();
    }

    /** One held packet. */
    private static final class Slot {
        final ByteBuffer data = ByteBuffer.allocateDirect(SLOT_BYTES);
        InetSocketAddress peer;
        /** The local address index it is sent from or arrived at. */
        int local;
        long due;
        boolean afterNext;
    }

    /** Held packets of one direction, in arrival order; the slots are preallocated and recycled. */
    private static final class Held {
        final Slot[] slots = new Slot[POOL];
        int count;
        /** The local address index of the packet {@link #takeDue} returned last. */
        int takenLocal;

        Held() {
            for (int i = 0; i < POOL; i++) {
                slots[i] = new Slot();
            }
        }

        /** Copies datagram[position, limit) into a free slot; false (and nothing held) when none is free. */
        boolean hold(final ByteBuffer datagram, final InetSocketAddress peer, final int local, final long due,
                final boolean afterNext) {
            return copyIn(datagram, datagram.position(), datagram.limit(), peer, local, due, afterNext);
        }

        /** Copies buffer[start, position) into a free slot. */
        boolean holdReceived(final ByteBuffer buffer, final int start, final InetSocketAddress src, final int local,
                final long due, final boolean afterNext) {
            return copyIn(buffer, start, buffer.position(), src, local, due, afterNext);
        }

        private boolean copyIn(final ByteBuffer from, final int start, final int end, final InetSocketAddress peer,
                final int local, final long due, final boolean afterNext) {
            final int length = end - start;
            if (count == POOL || length > SLOT_BYTES) {
                return false;
            }
            final Slot s = slots[count++];
            s.data.clear();
            s.data.put(0, from, start, length); // absolute bulk copy: positions untouched
            s.data.position(length);
            s.peer = peer;
            s.local = local;
            s.due = due;
            s.afterNext = afterNext;
            return true;
        }

        /** Nanoseconds from {@code now} until a held packet is due, {@link Long#MAX_VALUE} if none is held. */
        long nanosToFirstDue(final long now) {
            long first = Long.MAX_VALUE;
            for (int i = 0; i < count; i++) {
                first = Math.min(first, slots[i].due - now);
            }
            return first;
        }

        void afterNextPassed(final long now) {
            for (int i = 0; i < count; i++) {
                if (slots[i].afterNext) {
                    slots[i].afterNext = false;
                    slots[i].due = now;
                }
            }
        }

        /** Copies the oldest due packet into buffer at its position and returns its source, or null. */
        InetSocketAddress takeDue(final long now, final ByteBuffer buffer) {
            for (int i = 0; i < count; i++) {
                final Slot s = slots[i];
                if (now - s.due >= 0 && s.data.position() <= buffer.remaining()) {
                    s.data.flip();
                    buffer.put(s.data);
                    final InetSocketAddress peer = s.peer;
                    takenLocal = s.local;
                    remove(i);
                    return peer;
                }
            }
            return null;
        }

        /** Removes slot i keeping the order; the slot object moves to the free end. */
        void remove(final int i) {
            final Slot s = slots[i];
            System.arraycopy(slots, i + 1, slots, i, count - i - 1);
            slots[--count] = s;
        }
    }
}
