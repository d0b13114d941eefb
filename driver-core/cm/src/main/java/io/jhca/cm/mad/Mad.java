package io.jhca.cm.mad;

import java.util.Arrays;

/**
 * One 256-byte management datagram (IBTA 13.4.2): the common MAD header, then 232 bytes of class data. A
 * mutable flyweight over its own array; the CM messages' fields are {@link MadField}s of {@link CmMessages}.
 *
 * <p>Header layout (IBTA 13.4.2, Table 146): BaseVersion (byte 0), MgmtClass (1), ClassVersion (2), R and Method
 * (3), Status (4-5), ClassSpecific (6-7), TransactionID (8-15), AttributeID (16-17), reserved (18-19),
 * AttributeModifier (20-23).
 */
public final class Mad {
    public static final int SIZE = 256;
    public static final int HEADER_SIZE = 24;
    public static final int DATA_SIZE = SIZE - HEADER_SIZE;
    /** IBTA 13.4.2: base version 1. */
    public static final int BASE_VERSION = 1;
    /** IBTA 13.4.4 Table 148: the communication management class. */
    public static final int CLASS_CM = 0x07;
    /** IBTA 12.6: CM class version 2. */
    public static final int CM_CLASS_VERSION = 2;
    /** IBTA 12.6.1: every CM message is a ComMgtSend (method 0x03). */
    public static final int METHOD_SEND = 0x03;

    private final byte[] bytes;

    public Mad() {
        this(new byte[SIZE]);
    }

    private Mad(byte[] bytes) {
        this.bytes = bytes;
    }

    /** A MAD over a copy of {@code length} received bytes starting at {@code offset}; shorter input is refused. */
    public static Mad wrap(byte[] src, int offset, int length) {
        if (length < SIZE || offset < 0 || offset + SIZE > src.length) {
            throw new IllegalArgumentException("a MAD has " + SIZE + " bytes, got " + length);
        }
        return new Mad(Arrays.copyOfRange(src, offset, offset + SIZE));
    }

    /** A CM MAD with a fresh header: base version 1, class CM, version 2, ComMgtSend, the attribute and TID. */
    public static Mad cm(int attributeId, long tid) {
        Mad m = new Mad();
        m.bytes[0] = BASE_VERSION;
        m.bytes[1] = CLASS_CM;
        m.bytes[2] = CM_CLASS_VERSION;
        m.bytes[3] = METHOD_SEND;
        m.putHeader(8, 8, tid);
        m.putHeader(16, 2, attributeId);
        return m;
    }

    public byte[] bytes() {
        return bytes;
    }

    public int baseVersion() {
        return bytes[0] & 0xFF;
    }

    public int mgmtClass() {
        return bytes[1] & 0xFF;
    }

    public int classVersion() {
        return bytes[2] & 0xFF;
    }

    public int method() {
        return bytes[3] & 0x7F;
    }

    public int status() {
        return (int) getHeader(4, 2);
    }

    public long tid() {
        return getHeader(8, 8);
    }

    public int attributeId() {
        return (int) getHeader(16, 2);
    }

    public long attributeModifier() {
        return getHeader(20, 4);
    }

    private long getHeader(int at, int n) {
        long v = 0;
        for (int i = 0; i < n; i++) {
            v = (v << 8) | (bytes[at + i] & 0xFF);
        }
        return v;
    }

    private void putHeader(int at, int n, long v) {
        for (int i = n - 1; i >= 0; i--) {
            bytes[at + i] = (byte) v;
            v >>>= 8;
        }
    }

    /** A field's value (unsigned, at most 64 bits). */
    public long get(MadField f) {
        int first = (HEADER_SIZE + f.offset()) * 8 + f.bit();
        long v = 0;
        for (int i = 0; i < f.width(); i++) {
            int b = first + i;
            v = (v << 1) | ((bytes[b >> 3] >> (7 - (b & 7))) & 1);
        }
        return v;
    }

    public int getInt(MadField f) {
        return (int) get(f);
    }

    /** Sets a field; a value wider than the field is refused, naming it. */
    public Mad set(MadField f, long value) {
        if (f.width() < 64 && (value & ~f.max()) != 0) {
            throw new IllegalArgumentException(f.name() + " holds " + f.width() + " bits, got 0x" + Long.toHexString(value));
        }
        int first = (HEADER_SIZE + f.offset()) * 8 + f.bit();
        for (int i = f.width() - 1; i >= 0; i--) {
            int b = first + i;
            int mask = 1 << (7 - (b & 7));
            if ((value & 1) != 0) {
                bytes[b >> 3] |= (byte) mask;
            } else {
                bytes[b >> 3] &= (byte) ~mask;
            }
            value >>>= 1;
        }
        return this;
    }

    /** Copies {@code len} bytes of class data at data offset {@code offset}. */
    public byte[] getBytes(int offset, int len) {
        checkData(offset, len);
        return Arrays.copyOfRange(bytes, HEADER_SIZE + offset, HEADER_SIZE + offset + len);
    }

    /** Writes bytes into the class data at {@code offset}, at most {@code room} of them. */
    public Mad putBytes(int offset, int room, byte[] src, String what) {
        if (src.length > room) {
            throw new IllegalArgumentException(what + " holds at most " + room + " bytes, got " + src.length);
        }
        checkData(offset, src.length);
        System.arraycopy(src, 0, bytes, HEADER_SIZE + offset, src.length);
        return this;
    }

    private static void checkData(int offset, int len) {
        if (offset < 0 || len < 0 || offset + len > DATA_SIZE) {
            throw new IllegalArgumentException("[" + offset + ", +" + len + ") is outside the " + DATA_SIZE
                    + " bytes of MAD data");
        }
    }

    /** The CM message name of the attribute ID ("REQ", "REP", ...). */
    public String attributeName() {
        return CmMessages.name(attributeId());
    }

    @Override
    public String toString() {
        return "MAD " + attributeName() + " tid 0x" + Long.toHexString(tid());
    }
}
