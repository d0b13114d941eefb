package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * Datagram Extended Transport Header, 8 bytes, big-endian (rxe_hdr.h struct rxe_deth): Q_Key (32) at 0,
 * reserved byte at 4, source QP (24) in bytes 5-7.
 */
public final class Deth extends HeaderFlyweight<Deth> {

    public static final int LENGTH = 8;
    /** Q_Key of the GSI QP (QP1): a sender that is QP1 puts it in DETH (rxe_hdr.h GSI_QKEY). */
    public static final int GSI_QKEY = 0x80010000;

    @Override
    public int length() {
        return LENGTH;
    }

    public int qkey() {
        return buffer.getInt(offset, BIG_ENDIAN);
    }

    public Deth qkey(final int qkey) {
        mutable().putInt(offset, qkey, BIG_ENDIAN);
        return this;
    }

    public int srcQp() {
        return get24(4);
    }

    public Deth srcQp(final int qpn) {
        put24(4, qpn, "srcQp");
        return this;
    }

    public Deth set(final int qkey, final int srcQp) {
        mutable().putByte(offset + 4, (byte) 0);
        return qkey(qkey).srcQp(srcQp);
    }
}
