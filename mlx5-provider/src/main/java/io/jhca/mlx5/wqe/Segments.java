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
     * layer below checks again.
     */
    static void put16(MutableDirectBuffer buffer, int offset, long first, long second) {
        if (offset < 0 || offset > buffer.capacity() - 16) {
            throw new IndexOutOfBoundsException("segment [" + offset + ", +16) outside buffer of " + buffer.capacity());
        }
        long address = buffer.addressOffset() + offset;
        Object array = buffer.byteArray();
        UnsafeApi.putLong(array, address, NATIVE_LITTLE_ENDIAN ? Long.reverseBytes(first) : first);
        UnsafeApi.putLong(array, address + 8, NATIVE_LITTLE_ENDIAN ? Long.reverseBytes(second) : second);
    }

    static void checkField(String name, int value, int max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(name + " 0x" + Integer.toHexString(value) + " outside 0..0x" + Integer.toHexString(max));
        }
    }
}
