package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * RDMA Extended Transport Header, 16 bytes, big-endian (rxe_hdr.h struct rxe_reth):
 * VA (64) at 0, R_Key (32) at 8, DMA length (32) at 12. rxe's requester puts the remaining message length
 * in DMA length (the whole length on FIRST/ONLY).
 */
public final class Reth extends HeaderFlyweight<Reth> {

    public static final int LENGTH = 16;

    @Override
    public int length() {
        return LENGTH;
    }

    public long va() {
        return buffer.getLong(offset, BIG_ENDIAN);
    }

    public Reth va(final long va) {
        mutable().putLong(offset, va, BIG_ENDIAN);
        return this;
    }

    public int rkey() {
        return buffer.getInt(offset + 8, BIG_ENDIAN);
    }

    public Reth rkey(final int rkey) {
        mutable().putInt(offset + 8, rkey, BIG_ENDIAN);
        return this;
    }

    /** DMA length as the raw 32-bit field; use {@link #dmaLengthUnsigned()} for lengths of 2 GiB and more. */
    public int dmaLength() {
        return buffer.getInt(offset + 12, BIG_ENDIAN);
    }

    public long dmaLengthUnsigned() {
        return dmaLength() & 0xFFFF_FFFFL;
    }

    public Reth dmaLength(final int length) {
        mutable().putInt(offset + 12, length, BIG_ENDIAN);
        return this;
    }

    public Reth set(final long va, final int rkey, final int length) {
        return va(va).rkey(rkey).dmaLength(length);
    }
}
