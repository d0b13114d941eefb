package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * ACK Extended Transport Header, 4 bytes, big-endian: Syndrome (8) then MSN (24) (rxe_hdr.h struct rxe_aeth).
 *
 * <p>Syndrome (IBTA 9.7.5.1; rxe_hdr.h AETH_TYPE_MASK 0x60): bit 7 reserved, bits 6:5 type
 * (00 ACK, 01 RNR NAK, 10 reserved, 11 NAK), bits 4:0 value (ACK: credit count, 0x1F = unlimited;
 * RNR NAK: {@link RnrTimer} code; NAK: one of the NAK_* codes).
 */
public final class Aeth extends HeaderFlyweight<Aeth> {

    public static final int LENGTH = 4;

    public static final int TYPE_MASK = 0x60;
    public static final int TYPE_ACK = 0x00;
    public static final int TYPE_RNR_NAK = 0x20;
    public static final int TYPE_RESERVED = 0x40;
    public static final int TYPE_NAK = 0x60;
    public static final int VALUE_MASK = 0x1F;

    /** Credit count "invalid / unlimited"; rxe always sends it (rxe_hdr.h AETH_ACK_UNLIMITED). */
    public static final int CREDITS_UNLIMITED = 0x1F;
    /** The ACK syndrome rxe sends: 0x1F. */
    public static final int SYNDROME_ACK = TYPE_ACK | CREDITS_UNLIMITED;

    // NAK codes (IBTA table 44; rxe_hdr.h AETH_NAK_*).
    public static final int NAK_PSN_SEQUENCE_ERROR = 0;
    public static final int NAK_INVALID_REQUEST = 1;
    public static final int NAK_REMOTE_ACCESS_ERROR = 2;
    public static final int NAK_REMOTE_OPERATIONAL_ERROR = 3;
    public static final int NAK_INVALID_RD_REQUEST = 4;

    @Override
    public int length() {
        return LENGTH;
    }

    /** Syndrome of a positive ACK carrying {@code credits} (0..31; 0x1F = unlimited). */
    public static int ackSyndrome(final int credits) {
        return TYPE_ACK | checkValue(credits);
    }

    /** Syndrome of an RNR NAK asking to wait {@link RnrTimer#nanos(int) timerCode}. */
    public static int rnrNakSyndrome(final int timerCode) {
        return TYPE_RNR_NAK | checkValue(timerCode);
    }

    /** Syndrome of a NAK with one of the NAK_* codes: 0x60 PSN sequence error ... 0x63 remote op error. */
    public static int nakSyndrome(final int nakCode) {
        return TYPE_NAK | checkValue(nakCode);
    }

    private static int checkValue(final int value) {
        if ((value & ~VALUE_MASK) != 0) {
            throw new IllegalArgumentException("AETH syndrome value must be 0..31: " + value);
        }
        return value;
    }

    public static int type(final int syndrome) {
        return syndrome & TYPE_MASK;
    }

    public static int value(final int syndrome) {
        return syndrome & VALUE_MASK;
    }

    public int syndrome() {
        return buffer.getByte(offset) & 0xFF;
    }

    public Aeth syndrome(final int syndrome) {
        if ((syndrome & ~0xFF) != 0) {
            throw new IllegalArgumentException("syndrome must fit 8 bits: " + syndrome);
        }
        mutable().putByte(offset, (byte) syndrome);
        return this;
    }

    /** Message sequence number, 24 bits. */
    public int msn() {
        return buffer.getInt(offset, BIG_ENDIAN) & 0xFFFFFF;
    }

    public Aeth msn(final int msn) {
        put24(0, msn, "msn");
        return this;
    }

    /** Both fields in one big-endian word (the setters read and write each on its own). */
    public Aeth set(final int syndrome, final int msn) {
        if ((syndrome & ~0xFF | msn & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException(String.format("AETH field out of range: syndrome %#x, msn %#x",
                    syndrome, msn));
        }
        mutable().putInt(offset, syndrome << 24 | msn, BIG_ENDIAN);
        return this;
    }

    public boolean isAck() {
        return type(syndrome()) == TYPE_ACK;
    }

    public boolean isRnrNak() {
        return type(syndrome()) == TYPE_RNR_NAK;
    }

    public boolean isNak() {
        return type(syndrome()) == TYPE_NAK;
    }

    /** Credit count of an ACK, RNR timer code of an RNR NAK, NAK code of a NAK. */
    public int value() {
        return value(syndrome());
    }
}
