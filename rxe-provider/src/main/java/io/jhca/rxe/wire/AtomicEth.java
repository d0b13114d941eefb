package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Atomic Extended Transport Header, 28 bytes, big-endian (rxe_hdr.h struct rxe_atmeth): VA (64) at 0,
 * R_Key (32) at 8, Swap-or-Add data (64) at 12, Compare data (64) at 20. The 64-bit fields at 12 and 20 are
 * not 8-byte aligned relative to the header; plain (non-atomic) buffer reads handle that.
 */
public final class AtomicEth extends HeaderFlyweight<AtomicEth> {

    public static final int LENGTH = 28;

    @Override
    public int length() {
        return LENGTH;
    }

    public long va() {
        return buffer.getLong(offset, BIG_ENDIAN);
    }

    public AtomicEth va(final long va) {
        mutable().putLong(offset, va, BIG_ENDIAN);
        return this;
    }

    public int rkey() {
        return buffer.getInt(offset + 8, BIG_ENDIAN);
    }

    public AtomicEth rkey(final int rkey) {
        mutable().putInt(offset + 8, rkey, BIG_ENDIAN);
        return this;
    }

    /** Swap value (COMPARE_SWAP) or addend (FETCH_ADD). */
    public long swapAdd() {
        return buffer.getLong(offset + 12, BIG_ENDIAN);
    }

    public AtomicEth swapAdd(final long value) {
        mutable().putLong(offset + 12, value, BIG_ENDIAN);
        return this;
    }

    /** Compare value; rxe sets it only for COMPARE_SWAP (0 for FETCH_ADD). */
    public long compare() {
        return buffer.getLong(offset + 20, BIG_ENDIAN);
    }

    public AtomicEth compare(final long value) {
        mutable().putLong(offset + 20, value, BIG_ENDIAN);
        return this;
    }

    public AtomicEth set(final long va, final int rkey, final long swapAdd, final long compare) {
        return va(va).rkey(rkey).swapAdd(swapAdd).compare(compare);
    }
}
