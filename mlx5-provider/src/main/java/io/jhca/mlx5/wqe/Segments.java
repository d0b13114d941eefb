package io.jhca.mlx5.wqe;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.UnsafeApi;

/** Bounds and field-range checks shared by the segment writers: a bad value is an exception, never a stray store. */
final class Segments {

    private static final boolean NATIVE_LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private Segments() {
    }

    static void checkBounds(DirectBuffer buffer, int offset, int size) {
        if (offset < 0 || offset > buffer.capacity() - size) {
            throw new IndexOutOfBoundsException("segment [" + offset + ", +" + size + ") outside buffer of " + buffer.capacity());
        }
    }

    /**
     * One 16-byte segment as two 8-byte stores of big-endian values, after one bounds check for both: what every
     * segment writer ends in, so the bytes the golden tests compare are the bytes the send ring gets. Raw stores
     * through the buffer's array and address (an UnsafeBuffer over off-heap memory or a byte[] alike), so no
     * layer below checks again. Off-heap, the stores are made with a null base: the JIT then knows they cannot
     * touch a Java object, keeps the send ring's fields in registers across them and needs no ordering barrier
     * around them (an access whose base may be an array or null is compiled as "mixed", and fenced).
     */
    static void put16(MutableDirectBuffer buffer, int offset, long first, long second) {
        check(buffer, offset, 16);
        store16(buffer.byteArray(), buffer.addressOffset() + offset, first, second);
    }

    /**
     * Two consecutive segments after one bounds check for their 32 bytes. The address is computed once, as a long:
     * the later segments' addresses are then a displacement of the same register, where an int {@code offset + 16}
     * (which could overflow) would cost a sign extension and an add per segment.
     */
    static void put32(MutableDirectBuffer buffer, int offset, long a0, long a1, long b0, long b1) {
        check(buffer, offset, 32);
        Object array = buffer.byteArray();
        long address = buffer.addressOffset() + offset;
        store16(array, address, a0, a1);
        store16(array, address + 16, b0, b1);
    }

    /** Three consecutive segments after one bounds check for their 48 bytes (one address, as {@link #put32}). */
    static void put48(MutableDirectBuffer buffer, int offset, long a0, long a1, long b0, long b1, long c0, long c1) {
        check(buffer, offset, 48);
        Object array = buffer.byteArray();
        long address = buffer.addressOffset() + offset;
        store16(array, address, a0, a1);
        store16(array, address + 16, b0, b1);
        store16(array, address + 32, c0, c1);
    }

    /**
     * Two consecutive segments stored off-heap at {@code address}, with no check: for a caller whose address is a
     * slot of a ring it owns, masked into the ring, so that no input can move it outside.
     */
    static void put32At(long address, long a0, long a1, long b0, long b1) {
        store16(null, address, a0, a1);
        store16(null, address + 16, b0, b1);
    }

    /** As {@link #put32At}, three segments. */
    static void put48At(long address, long a0, long a1, long b0, long b1, long c0, long c1) {
        store16(null, address, a0, a1);
        store16(null, address + 16, b0, b1);
        store16(null, address + 32, c0, c1);
    }

    private static void check(MutableDirectBuffer buffer, int offset, int size) {
        if (offset < 0 || offset > buffer.capacity() - size) {
            throw new IndexOutOfBoundsException("segment bytes [" + offset + ", +" + size + ") outside buffer of "
                    + buffer.capacity());
        }
    }

    /** The two big-endian stores of a segment whose bytes the caller has checked ({@code array} null: off-heap). */
    private static void store16(Object array, long address, long first, long second) {
        long a = NATIVE_LITTLE_ENDIAN ? Long.reverseBytes(first) : first;
        long b = NATIVE_LITTLE_ENDIAN ? Long.reverseBytes(second) : second;
        if (array == null) {
            UnsafeApi.putLong(null, address, a);
            UnsafeApi.putLong(null, address + 8, b);
        } else {
            UnsafeApi.putLong(array, address, a);
            UnsafeApi.putLong(array, address + 8, b);
        }
    }

    /** One 4-byte big-endian store after its bounds check (a field rewritten in a segment already written). */
    static void put4(MutableDirectBuffer buffer, int offset, int value) {
        if (offset < 0 || offset > buffer.capacity() - 4) {
            throw new IndexOutOfBoundsException("field [" + offset + ", +4) outside buffer of " + buffer.capacity());
        }
        long address = buffer.addressOffset() + offset;
        Object array = buffer.byteArray();
        int v = NATIVE_LITTLE_ENDIAN ? Integer.reverseBytes(value) : value;
        if (array == null) {
            UnsafeApi.putInt(null, address, v);
        } else {
            UnsafeApi.putInt(array, address, v);
        }
    }

    static void checkField(String name, int value, int max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(name + " 0x" + Integer.toHexString(value) + " outside 0..0x" + Integer.toHexString(max));
        }
    }
}
