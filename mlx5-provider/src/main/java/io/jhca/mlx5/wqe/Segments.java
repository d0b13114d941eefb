package io.jhca.mlx5.wqe;

import org.agrona.DirectBuffer;

/** Bounds and field-range checks shared by the segment writers: a bad value is an exception, never a stray store. */
final class Segments {

    private Segments() {
    }

    static void checkBounds(DirectBuffer buffer, int offset, int size) {
        if (offset < 0 || offset > buffer.capacity() - size) {
            throw new IndexOutOfBoundsException("segment [" + offset + ", +" + size + ") outside buffer of " + buffer.capacity());
        }
    }

    static void checkField(String name, int value, int max) {
        if (value < 0 || value > max) {
            throw new IllegalArgumentException(name + " 0x" + Integer.toHexString(value) + " outside 0..0x" + Integer.toHexString(max));
        }
    }
}
