package io.jhca.mlx5.cmd;

/**
 * The 32-bit register view of BAR0 the command interface needs: the initialization segment lives at its start.
 * Values are passed as host ints; the implementation does the big-endian conversion (every init segment register is
 * big-endian, mlx5 device.h {@code struct mlx5_init_seg} uses {@code __be32}) and must issue each access as one
 * aligned 4-byte MMIO load/store, in program order.
 *
 * <p>This is the seam for {@code io.jhca.doorbell}'s MMIO window (not yet available when this package was written):
 * adapt it with a lambda-sized class. {@link MappedBar0} covers a BAR already mapped into an Agrona buffer, and device
 * models implement it to see register writes.
 */
public interface Bar0 {

    /** Reads the big-endian register at {@code offset} (4-byte aligned). */
    int readBe32(int offset);

    /** Writes the big-endian register at {@code offset} (4-byte aligned) with one 4-byte store. */
    void writeBe32(int offset, int value);

    /** Reads two consecutive big-endian registers as one 64-bit value, high word first (no atomicity implied). */
    default long readBe64(int offset) {
        long hi = Integer.toUnsignedLong(readBe32(offset));
        return (hi << 32) | Integer.toUnsignedLong(readBe32(offset + 4));
    }
}
