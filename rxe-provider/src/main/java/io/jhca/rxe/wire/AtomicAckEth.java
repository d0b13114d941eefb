package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

/** Atomic ACK Extended Transport Header, 8 bytes, big-endian: original remote data (64) (rxe_hdr.h rxe_atmack). */
public final class AtomicAckEth extends HeaderFlyweight<AtomicAckEth> {

    public static final int LENGTH = 8;

    @Override
    public int length() {
        return LENGTH;
    }

    public long origRemoteData() {
        return buffer.getLong(offset, BIG_ENDIAN);
    }

    public AtomicAckEth origRemoteData(final long value) {
        mutable().putLong(offset, value, BIG_ENDIAN);
        return this;
    }
}
