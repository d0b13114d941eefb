package io.jhca.doorbell;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

/** Off-heap, page-aligned memory standing in for a UAR page or a doorbell-record page. */
final class TestMemory {

    private TestMemory() {
    }

    static UnsafeBuffer page(int size) {
        return new UnsafeBuffer(BufferUtil.allocateDirectAligned(size, 4096));
    }

    /** The bytes at [offset, offset+len) as lower-case hex, in memory order. */
    static String hex(UnsafeBuffer b, int offset, int len) {
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < len; i++) {
            sb.append(String.format("%02x", b.getByte(offset + i) & 0xff));
        }
        return sb.toString();
    }
}
