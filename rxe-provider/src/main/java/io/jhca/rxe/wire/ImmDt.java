package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Immediate data, 4 bytes (rxe_hdr.h struct rxe_immdt). Opaque: verbs hands it over in network order
 * ({@code __be32 imm_data}), so {@link #immediate()} reads the four wire bytes big-endian and a value written
 * with {@link #immediate(int)} appears on the wire most significant byte first.
 */
public final class ImmDt extends HeaderFlyweight<ImmDt> {

    public static final int LENGTH = 4;

    @Override
    public int length() {
        return LENGTH;
    }

    public int immediate() {
        return buffer.getInt(offset, BIG_ENDIAN);
    }

    public ImmDt immediate(final int value) {
        mutable().putInt(offset, value, BIG_ENDIAN);
        return this;
    }
}
