package io.jhca.rxe.link;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;

import org.agrona.BufferUtil;

/**
 * Datagrams received in one call ({@link Link#receive(RxBatch)}): {@link #capacity()} slots of {@link #slotSize()}
 * bytes in one direct buffer, each with its length, its sender and the local address it arrived at. Made once per
 * engine and reused, so receiving allocates nothing; one thread (the engine's) fills and reads it.
 */
public final class RxBatch {

    /**
     * Slots start on a page: the kernel's copy of a datagram into a buffer 64 bytes past a page boundary ran at half
     * speed here (1 x 4 KiB from loopback: 3.9-4.2 us against 1.8-1.9 us at offsets 0, 128 .. 4032; 4K aliasing
     * between the socket buffer's bytes and the destination), which is where a 64-byte-aligned malloc put them.
     */
    static final int PAGE = 4096;

    private final ByteBuffer memory;
    private final long address;
    private final int slotSize;
    private final ByteBuffer[] views;
    private final int[] lengths;
    private final InetSocketAddress[] sources;
    private final int[] receivedOn;
    /** Where each datagram starts: its slot's first byte, or inside the slot for a segment of a coalesced one. */
    private final long[] addresses;
    private final int[] segments;
    /** For an entry outside the slots ({@link #addExternal}), the bytes a parser may read from its first; else -1. */
    private final int[] limits;
    private int count;

    /**
     * @param capacity datagrams per batch
     * @param slotSize bytes per datagram: larger than any valid packet, so a full slot means a truncated datagram; a
     *                 multiple of 4096 puts every slot on a page
     */
    public RxBatch(final int capacity, final int slotSize) {
        if (capacity < 1 || slotSize < 1 || (long) capacity * slotSize > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("batch of " + capacity + " x " + slotSize + " bytes");
        }
        this.slotSize = slotSize;
        this.memory = BufferUtil.allocateDirectAligned(capacity * slotSize, PAGE);
        this.address = BufferUtil.address(memory);
        this.views = new ByteBuffer[capacity];
        for (int i = 0; i < capacity; i++) {
            views[i] = memory.duplicate().position(i * slotSize).limit((i + 1) * slotSize).slice();
        }
        this.lengths = new int[capacity];
        this.sources = new InetSocketAddress[capacity];
        this.receivedOn = new int[capacity];
        this.addresses = new long[capacity];
        this.segments = new int[capacity];
        this.limits = new int[capacity];
    }

    public int capacity() {
        return views.length;
    }

    public int slotSize() {
        return slotSize;
    }

    /** Datagrams in the batch. */
    public int count() {
        return count;
    }

    /** Slots still free. */
    public int room() {
        return views.length - count;
    }

    /** Empties the batch (the engine, before each receive). */
    public void clear() {
        count = 0;
    }

    /** Native address of slot {@code i}'s first byte. */
    public long slotAddress(final int i) {
        return address + (long) i * slotSize;
    }

    /** Slot {@code i} as a buffer (position 0, limit {@link #slotSize()}), for links that receive into a ByteBuffer. */
    public ByteBuffer slot(final int i) {
        return views[i].clear();
    }

    /** Native address of datagram {@code i}'s first byte (in a slot; not always its own, see {@link #addSegment}). */
    public long address(final int i) {
        return addresses[i];
    }

    /**
     * The most a parser may read from datagram {@code i}'s first byte: to the end of the slot it lies in, or, for one
     * outside the slots, to the end of the memory its link gave with it.
     */
    public int bytesToSlotEnd(final int i) {
        final int limit = limits[i];
        return limit >= 0 ? limit : slotSize - (int) ((addresses[i] - address) % slotSize);
    }

    /** Which segment of a coalesced datagram datagram {@code i} was, counted from 0; 0 for one that came alone. */
    public int segment(final int i) {
        return segments[i];
    }

    /** Datagram {@code i}'s length; {@link #slotSize()} if it was truncated. */
    public int length(final int i) {
        return lengths[i];
    }

    /** Datagram {@code i}'s sender. */
    public InetSocketAddress source(final int i) {
        return sources[i];
    }

    /** Index in the link's {@link Link#localAddresses()} of the address datagram {@code i} arrived at. */
    public int receivedOn(final int i) {
        return receivedOn[i];
    }

    /** Records the datagram a link has just written into the next free slot. */
    public void add(final int length, final InetSocketAddress source, final int on) {
        final int i = count;
        addSegment(slotAddress(i), Math.min(length, slotSize), 0, source, on);
    }

    /**
     * Records segment {@code segment} of a coalesced datagram the link wrote into one slot: {@code length} bytes at
     * {@code address}, inside that slot (not necessarily slot {@link #count()}: a link that splits datagrams asks for
     * fewer than its room, so the slots it wrote stay ahead of the entries).
     */
    public void addSegment(final long address, final int length, final int segment, final InetSocketAddress source,
            final int on) {
        final int i = count++;
        addresses[i] = address;
        lengths[i] = length;
        segments[i] = segment;
        sources[i] = source;
        receivedOn[i] = on;
        limits[i] = -1;
    }

    /**
     * Records a datagram the link hands over where it received it, outside the batch's slots (a packet ring's frame,
     * valid until the link's next receive): {@code length} bytes at {@code address}, of which a parser may read
     * {@code limit} (at least {@code length}, less than a slot, so a full slot still means a datagram cut short).
     */
    public void addExternal(final long address, final int length, final int limit, final int segment,
            final InetSocketAddress source, final int on) {
        if (length < 0 || limit < length || limit >= slotSize) {
            throw new IllegalArgumentException("an entry of " + length + " bytes with " + limit + " readable, slots of "
                    + slotSize);
        }
        addSegment(address, length, segment, source, on);
        limits[count - 1] = limit;
    }
}
