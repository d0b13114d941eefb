package io.jhca.cm.mad;

/**
 * A field of a CM message as IBTA vol 1 ch. 12 lays it out: {@code width} bits starting {@code bit} bits after the
 * most significant bit of byte {@code offset} of the message data (the bytes after the 24-byte MAD header), big
 * endian. This is how Linux include/rdma/ibta_vol1_c12.h names them (CM_FIELD_BLOC(byte, bit, width)).
 */
public record MadField(String name, int offset, int bit, int width) {

    public MadField {
        if (width < 1 || width > 64 || bit < 0 || bit > 7 || offset < 0 || offset * 8 + bit + width > Mad.DATA_SIZE * 8) {
            throw new IllegalArgumentException("bad CM field " + name + " (" + offset + ", " + bit + ", " + width + ")");
        }
    }

    static MadField of(String name, int offset, int width) {
        return new MadField(name, offset, 0, width);
    }

    static MadField of(String name, int offset, int bit, int width) {
        return new MadField(name, offset, bit, width);
    }

    /** The largest value the field holds. */
    public long max() {
        return width == 64 ? -1L : (1L << width) - 1;
    }
}
