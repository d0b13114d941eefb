package io.jhca.vfio;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * Off-heap memory for one ioctl argument: zeroed, native byte order (VFIO structs are native-endian), with
 * the address the kernel is given. Owned by the Java heap (a direct buffer), so nothing to free by hand.
 */
final class NativeStruct {

    private final ByteBuffer memory;
    final UnsafeBuffer buffer;

    NativeStruct(final int size) {
        if (size <= 0) {
            throw new IllegalArgumentException("struct size " + size);
        }
        // 8-byte alignment for the u64 fields: allocate a little more and slice at an aligned address.
        final ByteBuffer raw = ByteBuffer.allocateDirect(size + 8);
        final UnsafeBuffer whole = new UnsafeBuffer(raw);
        final int skip = (int) ((8 - (whole.addressOffset() & 7)) & 7);
        this.memory = raw;
        this.buffer = new UnsafeBuffer(raw, skip, size);
    }

    /** A struct whose first u32 is {@code argsz} = {@code size}, as every VFIO info struct starts. */
    static NativeStruct withArgsz(final int size) {
        final NativeStruct s = new NativeStruct(size);
        s.buffer.putInt(0, size);
        return s;
    }

    /** A NUL-terminated string (GET_DEVICE_FD's argument). */
    static NativeStruct cString(final String text) {
        final byte[] bytes = text.getBytes(StandardCharsets.US_ASCII);
        final NativeStruct s = new NativeStruct(bytes.length + 1);
        s.buffer.putBytes(0, bytes);
        s.buffer.putByte(bytes.length, (byte) 0);
        return s;
    }

    long address() {
        return buffer.addressOffset();
    }

    int size() {
        return buffer.capacity();
    }

    /** Keeps the direct buffer reachable until the call that uses {@link #address()} has returned. */
    void keepAlive() {
        java.lang.ref.Reference.reachabilityFence(memory);
    }
}
