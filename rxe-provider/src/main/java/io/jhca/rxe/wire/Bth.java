package io.jhca.rxe.wire;

import static java.nio.ByteOrder.BIG_ENDIAN;

import org.agrona.MutableDirectBuffer;

/**
 * Base Transport Header, 12 bytes, big-endian (rxe_hdr.h struct rxe_bth; rocev2.md §1.2):
 * <pre>
 * byte 0      OpCode
 * byte 1      SE(7) M(6) PadCnt(5:4) TVer(3:0)
 * bytes 2-3   P_Key
 * byte 4      FECN(7) BECN(6) resv6a(5:0)   -- all forced to 1 in the ICRC
 * bytes 5-7   DestQP (24)
 * byte 8      AckReq(7) resv7(6:0)
 * bytes 9-11  PSN (24)
 * </pre>
 */
public final class Bth extends HeaderFlyweight<Bth> {

    public static final int LENGTH = 12;
    /** rxe always sends IB_DEFAULT_PKEY_FULL. */
    public static final int DEFAULT_PKEY = 0xFFFF;
    /** Transport header version; rxe drops anything else. */
    public static final int TVER = 0;
    /** Byte holding FECN, BECN and resv6a; masked to 0xFF in the ICRC (rxe_icrc.c). */
    public static final int FECN_BECN_OFFSET = 4;

    private static final int SE = 0x80;
    private static final int MIG_REQ = 0x40;
    private static final int PAD_SHIFT = 4;
    private static final int PAD_MASK = 0x30;
    private static final int TVER_MASK = 0x0F;
    private static final int FECN = 0x80;
    private static final int BECN = 0x40;
    private static final int ACK_REQ = 0x80;
    private static final int RESV7_MASK = 0x7F;

    @Override
    public int length() {
        return LENGTH;
    }

    private int byte1() {
        return buffer.getByte(offset + 1) & 0xFF;
    }

    private void byte1(final int mask, final int bits) {
        mutable().putByte(offset + 1, (byte) ((byte1() & ~mask) | bits));
    }

    public int opcode() {
        return buffer.getByte(offset) & 0xFF;
    }

    public Bth opcode(final int opcode) {
        if ((opcode & ~0xFF) != 0) {
            throw new IllegalArgumentException("opcode must fit 8 bits: " + opcode);
        }
        mutable().putByte(offset, (byte) opcode);
        return this;
    }

    /** Solicited event. */
    public boolean se() {
        return (byte1() & SE) != 0;
    }

    public Bth se(final boolean se) {
        byte1(SE, se ? SE : 0);
        return this;
    }

    /** MigReq; rxe sends 0 and does not check it. */
    public boolean migReq() {
        return (byte1() & MIG_REQ) != 0;
    }

    public Bth migReq(final boolean migReq) {
        byte1(MIG_REQ, migReq ? MIG_REQ : 0);
        return this;
    }

    /** Pad bytes (0..3) between payload and ICRC. */
    public int padCnt() {
        return (byte1() & PAD_MASK) >>> PAD_SHIFT;
    }

    public Bth padCnt(final int padCnt) {
        if ((padCnt & ~3) != 0) {
            throw new IllegalArgumentException("padCnt must be 0..3: " + padCnt);
        }
        byte1(PAD_MASK, padCnt << PAD_SHIFT);
        return this;
    }

    public int tVer() {
        return byte1() & TVER_MASK;
    }

    public Bth tVer(final int tVer) {
        if ((tVer & ~TVER_MASK) != 0) {
            throw new IllegalArgumentException("tVer must be 0..15: " + tVer);
        }
        byte1(TVER_MASK, tVer);
        return this;
    }

    public int pkey() {
        return buffer.getShort(offset + 2, BIG_ENDIAN) & 0xFFFF;
    }

    public Bth pkey(final int pkey) {
        if ((pkey & ~0xFFFF) != 0) {
            throw new IllegalArgumentException("pkey must fit 16 bits: " + pkey);
        }
        mutable().putShort(offset + 2, (short) pkey, BIG_ENDIAN);
        return this;
    }

    /** Byte 4 as is: FECN(7), BECN(6), resv6a(5:0). */
    public int fecnBecnByte() {
        return buffer.getByte(offset + FECN_BECN_OFFSET) & 0xFF;
    }

    public Bth fecnBecnByte(final int value) {
        mutable().putByte(offset + FECN_BECN_OFFSET, (byte) value);
        return this;
    }

    public boolean fecn() {
        return (fecnBecnByte() & FECN) != 0;
    }

    public Bth fecn(final boolean fecn) {
        return fecnBecnByte((fecnBecnByte() & ~FECN) | (fecn ? FECN : 0));
    }

    public boolean becn() {
        return (fecnBecnByte() & BECN) != 0;
    }

    public Bth becn(final boolean becn) {
        return fecnBecnByte((fecnBecnByte() & ~BECN) | (becn ? BECN : 0));
    }

    /** Destination QP number, 24 bits (bytes 5-7). */
    public int destQp() {
        return get24(4);
    }

    public Bth destQp(final int qpn) {
        put24(4, qpn, "destQp");
        return this;
    }

    public boolean ackReq() {
        return (buffer.getByte(offset + 8) & ACK_REQ) != 0;
    }

    public Bth ackReq(final boolean ackReq) {
        final int b = buffer.getByte(offset + 8) & 0xFF;
        mutable().putByte(offset + 8, (byte) ((b & ~ACK_REQ) | (ackReq ? ACK_REQ : 0)));
        return this;
    }

    /** Reserved bits 6:0 of byte 8; send 0. */
    public int resv7() {
        return buffer.getByte(offset + 8) & RESV7_MASK;
    }

    public Bth resv7(final int resv7) {
        if ((resv7 & ~RESV7_MASK) != 0) {
            throw new IllegalArgumentException("resv7 must fit 7 bits: " + resv7);
        }
        final int b = buffer.getByte(offset + 8) & 0xFF;
        mutable().putByte(offset + 8, (byte) ((b & ACK_REQ) | resv7));
        return this;
    }

    /** Packet sequence number, 24 bits (bytes 9-11). */
    public int psn() {
        return get24(8);
    }

    public Bth psn(final int psn) {
        put24(8, psn, "psn");
        return this;
    }

    /**
     * Writes the whole header as rxe would: MigReq 0, TVer 0, FECN/BECN/reserved 0.
     *
     * @param padCnt pad bytes after the payload, {@code (-payloadLength) & 3}
     */
    public Bth set(final int opcode, final boolean se, final int padCnt, final int pkey, final int destQp,
            final boolean ackReq, final int psn) {
        if ((opcode & ~0xFF | padCnt & ~3 | pkey & ~0xFFFF | destQp & ~0xFFFFFF | psn & ~0xFFFFFF) != 0) {
            throw new IllegalArgumentException(String.format(
                    "BTH field out of range: opcode %#x, padCnt %d, pkey %#x, destQp %#x, psn %#x",
                    opcode, padCnt, pkey, destQp, psn));
        }
        // three big-endian words, every other bit 0: one store each where the setters read and write each field
        final MutableDirectBuffer b = mutable();
        b.putInt(offset, opcode << 24 | (se ? SE << 16 : 0) | padCnt << (PAD_SHIFT + 16) | pkey, BIG_ENDIAN);
        b.putInt(offset + 4, destQp, BIG_ENDIAN);
        b.putInt(offset + 8, (ackReq ? ACK_REQ << 24 : 0) | psn, BIG_ENDIAN);
        return this;
    }

    /** Pad count for a payload of {@code payloadLength} bytes (rxe_req.c finish_packet). */
    public static int padFor(final int payloadLength) {
        return -payloadLength & 3;
    }
}
