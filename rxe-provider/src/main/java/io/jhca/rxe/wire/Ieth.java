package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

/** Invalidate Extended Transport Header, 4 bytes, big-endian: the R_Key to invalidate (rxe_hdr.h rxe_ieth). */
public final class Ieth extends HeaderFlyweight<Ieth> {

    public static final int LENGTH = 4;

    @Override
    public int length() {
        return LENGTH;
    }

    public int rkey() {
        return buffer.getInt(offset, BIG_ENDIAN);
    }

    public Ieth rkey(final int rkey) {
        mutable().putInt(offset, rkey, BIG_ENDIAN);
        return this;
    }
}
