package io.jhca.rxe.wire;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * A reusable view of one fixed-size wire header at an offset in an Agrona buffer. Wrapping checks once that
 * the whole header lies inside the buffer; getters and setters then touch only those bytes (and Agrona's own
 * bounds checks stay on as a second line). Wire fields are big-endian unless a subclass says otherwise.
 *
 * <p>Wrapped over a read-only {@link DirectBuffer}, setters throw {@link IllegalStateException}.
 */
public abstract class HeaderFlyweight<T extends HeaderFlyweight<T>> {

    protected DirectBuffer buffer;
    protected MutableDirectBuffer mutableBuffer;
    protected int offset;

    /** Header size in bytes. */
    public abstract int length();

    @SuppressWarnings("unchecked")
    private T self() {
        return (T) this;
    }

    /** Wraps for reading and writing. */
    public final T wrap(final MutableDirectBuffer buffer, final int offset) {
        checkRange(buffer, offset);
        this.buffer = buffer;
        this.mutableBuffer = buffer;
        this.offset = offset;
        return self();
    }

    /** Wraps for reading only. */
    public final T wrap(final DirectBuffer buffer, final int offset) {
        if (buffer instanceof MutableDirectBuffer) {
            return wrap((MutableDirectBuffer) buffer, offset);
        }
        checkRange(buffer, offset);
        this.buffer = buffer;
        this.mutableBuffer = null;
        this.offset = offset;
        return self();
    }

    private void checkRange(final DirectBuffer buffer, final int offset) {
        if (offset < 0 || offset > buffer.capacity() - length()) {
            throw new IndexOutOfBoundsException(getClass().getSimpleName() + " of " + length()
                    + " bytes at offset " + offset + " does not fit a buffer of " + buffer.capacity());
        }
    }

    public final DirectBuffer buffer() {
        return buffer;
    }

    public final int offset() {
        return offset;
    }

    /** Zeroes the whole header (reserved bits included). */
    public final T clear() {
        mutable().setMemory(offset, length(), (byte) 0);
        return self();
    }

    protected final MutableDirectBuffer mutable() {
        if (mutableBuffer == null) {
            throw new IllegalStateException(getClass().getSimpleName() + " is wrapped over a read-only buffer");
        }
        return mutableBuffer;
    }

    /** 24-bit big-endian field in the low three bytes of the 32-bit word at {@code at}. */
    protected final int get24(final int at) {
        return buffer.getInt(offset + at, java.nio.ByteOrder.BIG_ENDIAN) & 0xFFFFFF;
    }

    /** Writes the low three bytes of the big-endian word at {@code at}, keeping its top byte. */
    protected final void put24(final int at, final int value, final String field) {
        if ((value & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException(field + " must fit 24 bits: 0x" + Integer.toHexString(value));
        }
        final MutableDirectBuffer b = mutable();
        final int word = b.getInt(offset + at, java.nio.ByteOrder.BIG_ENDIAN);
        b.putInt(offset + at, (word & 0xFF000000) | value, java.nio.ByteOrder.BIG_ENDIAN);
    }
}
