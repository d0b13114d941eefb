package io.jhca.mlx5.cmd;

import java.nio.ByteOrder;

import org.agrona.concurrent.AtomicBuffer;

/**
 * {@link Bar0} over memory that is already mapped, e.g. a vfio BAR0 mmap wrapped in an {@code UnsafeBuffer}, or a
 * direct buffer standing in for one in tests. Accesses are volatile 4-byte loads/stores (one instruction each,
 * ordered with every other volatile access), byte-swapped to big-endian on little-endian hosts.
 */
public final class MappedBar0 implements Bar0 {

    private static final boolean SWAP = ByteOrder.nativeOrder() != ByteOrder.BIG_ENDIAN;

    private final AtomicBuffer window;

    public MappedBar0(AtomicBuffer window) {
        this.window = window;
    }

    public AtomicBuffer window() {
        return window;
    }

    @Override
    public int readBe32(int offset) {
        checkAligned(offset);
        int v = window.getIntVolatile(offset);
        return SWAP ? Integer.reverseBytes(v) : v;
    }

    @Override
    public void writeBe32(int offset, int value) {
        checkAligned(offset);
        window.putIntVolatile(offset, SWAP ? Integer.reverseBytes(value) : value);
    }

    private static void checkAligned(int offset) {
        if ((offset & 3) != 0) {
            throw new IllegalArgumentException("BAR0 register offset 0x" + Integer.toHexString(offset)
                    + " is not 4-byte aligned");
        }
    }
}
