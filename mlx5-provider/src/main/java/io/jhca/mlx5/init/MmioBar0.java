package io.jhca.mlx5.init;

import io.jhca.doorbell.MmioWindow;
import io.jhca.mlx5.cmd.Bar0;

/**
 * The command interface's register view ({@link Bar0}) over the function's mapped BAR0 ({@link MmioWindow}): every
 * init segment access is one aligned 4-byte big-endian MMIO load or store, as device.h's {@code __be32} registers
 * require.
 */
final class MmioBar0 implements Bar0 {

    private final MmioWindow bar;

    MmioBar0(MmioWindow bar) {
        this.bar = bar;
    }

    @Override
    public int readBe32(int offset) {
        return bar.getIntBe(offset);
    }

    @Override
    public void writeBe32(int offset, int value) {
        bar.putIntBe(offset, value);
    }
}
