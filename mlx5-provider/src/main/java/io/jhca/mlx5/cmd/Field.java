package io.jhca.mlx5.cmd;

import java.nio.ByteOrder;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * One field of a PRM structure, placed exactly as {@code struct mlx5_ifc_<name>_bits} places it: a bit offset from
 * the start of the structure and a width in bits, where the structure is a sequence of big-endian dwords and bit 0 is
 * the most significant bit of dword 0 (this is what mlx5dv.h's {@code DEVX_SET}/{@code DEVX_GET} compute).
 *
 * <p>Three kinds:
 * <ul>
 *   <li>{@link Kind#SCALAR}: 1..64 bits, read and written as an unsigned number. A field inside one dword is a
 *       read-modify-write of that dword (as {@code DEVX_SET}); a 64-bit field is two dwords, high dword first
 *       ({@code DEVX_SET64}); any other field crossing dwords is handled as the same big-endian bit string.</li>
 *   <li>{@link Kind#BYTES}: a byte-aligned blob such as {@code rgid_rip[16][0x8]}, copied as is.</li>
 *   <li>{@link Kind#ARRAY}: repeated elements of 8/16/32/64 bits, such as {@code pas[][0x40]}; a count of
 *       {@link #FLEXIBLE} marks a trailing array whose length the command decides.</li>
 * </ul>
 * Fields are immutable and safe to share; resolve them once ({@link Layout#field(String)}) and keep them in static
 * finals on hot paths. Every access is bounds-checked by the Agrona buffer.
 */
public final class Field {

    /** Element count of a trailing array that runs past the end of its structure ({@code u8 pas[][0x40]}). */
    public static final int FLEXIBLE = -1;

    /** What kind of storage a field describes. */
    public enum Kind { SCALAR, BYTES, ARRAY }

    private final String name;
    private final int bitOffset;
    private final int bitWidth;
    private final Kind kind;
    private final int count;
    private final boolean alias;

    Field(String name, int bitOffset, int bitWidth, Kind kind, int count, boolean alias) {
        this.name = name;
        this.bitOffset = bitOffset;
        this.bitWidth = bitWidth;
        this.kind = kind;
        this.count = count;
        this.alias = alias;
    }

    Field moved(String prefix, int bitDelta) {
        return new Field(prefix + "." + name, bitOffset + bitDelta, bitWidth, kind, count, alias);
    }

    /** Field name as in mlx5_ifc.h; nested structures joined with dots ({@code qpc.primary_address_path.sl}). */
    public String name() {
        return name;
    }

    /** Bit offset from the start of the structure (mlx5_ifc's {@code reserved_at_<offset>} numbering). */
    public int bitOffset() {
        return bitOffset;
    }

    /** Width in bits: of the value (scalar), of the whole blob (bytes) or of one element (array). */
    public int bitWidth() {
        return bitWidth;
    }

    public Kind kind() {
        return kind;
    }

    /** Number of array elements, {@link #FLEXIBLE} for a trailing array; 1 for scalars and byte blobs. */
    public int count() {
        return count;
    }

    /**
     * True for a convenience field that overlaps real mlx5_ifc fields (e.g. a 48-bit {@code rmac} spanning
     * {@code rmac_47_32} and {@code rmac_31_0}); aliases have no counterpart in the C header.
     */
    public boolean isAlias() {
        return alias;
    }

    /** Offset of the first byte the field touches. */
    public int byteOffset() {
        return bitOffset >>> 3;
    }

    /** Total bits occupied (0 for a flexible array). */
    public int totalBits() {
        return kind == Kind.ARRAY ? (count == FLEXIBLE ? 0 : bitWidth * count) : bitWidth;
    }

    /** Bytes per element of an array. */
    public int elementBytes() {
        requireKind(Kind.ARRAY);
        return bitWidth >>> 3;
    }

    /** Byte offset (from the start of the structure) of array element {@code index}. */
    public int elementByteOffset(int index) {
        checkIndex(index);
        return (bitOffset >>> 3) + index * (bitWidth >>> 3);
    }

    // ---- scalars ----

    /** Reads an unsigned scalar at {@code base} (the structure's first byte). */
    public long get(DirectBuffer buffer, int base) {
        requireKind(Kind.SCALAR);
        return readBits(buffer, base, bitOffset, bitWidth);
    }

    /** Reads a scalar of at most 32 bits as an int (a 32-bit field keeps its sign bit, e.g. {@code num_pages}). */
    public int getInt(DirectBuffer buffer, int base) {
        if (bitWidth > 32) {
            throw new IllegalStateException(name + " is " + bitWidth + " bits wide; use get()");
        }
        return (int) get(buffer, base);
    }

    /** Reads a 1-bit flag. */
    public boolean getBoolean(DirectBuffer buffer, int base) {
        return get(buffer, base) != 0;
    }

    /**
     * Writes a scalar, leaving every other bit of the touched dwords as it was. The value must fit the width as an
     * unsigned number or as a two's-complement signed one (so -1 fills a field with ones); anything else is refused,
     * not truncated.
     */
    public void set(MutableDirectBuffer buffer, int base, long value) {
        requireKind(Kind.SCALAR);
        if (!fits(value, bitWidth)) {
            throw new IllegalArgumentException(String.format(
                    "value 0x%x does not fit field %s (%d bits)", value, name, bitWidth));
        }
        writeBits(buffer, base, bitOffset, bitWidth, value);
    }

    /** Writes a 1-bit flag (or any scalar: 1/0). */
    public void set(MutableDirectBuffer buffer, int base, boolean value) {
        set(buffer, base, value ? 1L : 0L);
    }

    // ---- byte blobs ----

    /** Copies {@code bitWidth/8} bytes into the field. */
    public void setBytes(MutableDirectBuffer buffer, int base, byte[] src) {
        requireKind(Kind.BYTES);
        if (src.length != bitWidth >>> 3) {
            throw new IllegalArgumentException(name + " takes " + (bitWidth >>> 3) + " bytes, got " + src.length);
        }
        buffer.putBytes(base + byteOffset(), src);
    }

    /** Copies the field's bytes into {@code dst} (exactly {@code bitWidth/8} long). */
    public void getBytes(DirectBuffer buffer, int base, byte[] dst) {
        requireKind(Kind.BYTES);
        if (dst.length != bitWidth >>> 3) {
            throw new IllegalArgumentException(name + " has " + (bitWidth >>> 3) + " bytes, dst holds " + dst.length);
        }
        buffer.getBytes(base + byteOffset(), dst);
    }

    // ---- arrays ----

    /** Reads array element {@code index}, big-endian. */
    public long getElement(DirectBuffer buffer, int base, int index) {
        checkIndex(index);
        return readBits(buffer, base, bitOffset + index * bitWidth, bitWidth);
    }

    /** Writes array element {@code index}, big-endian; the value must fit the element width. */
    public void setElement(MutableDirectBuffer buffer, int base, int index, long value) {
        checkIndex(index);
        if (!fits(value, bitWidth)) {
            throw new IllegalArgumentException(String.format(
                    "value 0x%x does not fit an element of %s (%d bits)", value, name, bitWidth));
        }
        writeBits(buffer, base, bitOffset + index * bitWidth, bitWidth, value);
    }

    private void checkIndex(int index) {
        requireKind(Kind.ARRAY);
        if (index < 0 || (count != FLEXIBLE && index >= count)) {
            throw new IndexOutOfBoundsException(name + "[" + index + "], array has " + count + " elements");
        }
    }

    private void requireKind(Kind wanted) {
        if (kind != wanted) {
            throw new IllegalStateException(name + " is a " + kind + " field, not " + wanted);
        }
    }

    // ---- big-endian bit-string access ----

    /** Fits as an unsigned number, or as a negative two's-complement one. */
    private static boolean fits(long value, int bits) {
        return bits == 64 || (value >>> bits) == 0 || (value >> (bits - 1)) == -1L;
    }

    static long mask(int bits) {
        return bits == 64 ? -1L : (1L << bits) - 1;
    }

    /** Reads {@code width} bits at {@code bitOff} of the big-endian bit string starting at {@code base}. */
    static long readBits(DirectBuffer buffer, int base, int bitOff, int width) {
        int first = bitOff >>> 5;
        int last = (bitOff + width - 1) >>> 5;
        if (first == last) {
            // DEVX_GET: one big-endian dword, field ends at bit (32 - width - bitOff % 32) from the LSB
            int dw = buffer.getInt(base + (first << 2), ByteOrder.BIG_ENDIAN);
            return (Integer.toUnsignedLong(dw) >>> (32 - width - (bitOff & 31))) & mask(width);
        }
        int end = bitOff + width;
        long value = 0;
        for (int d = first; d <= last; d++) {
            int dwStart = d << 5;
            int segEnd = Math.min(end, dwStart + 32);
            int segLen = segEnd - Math.max(bitOff, dwStart);
            long dw = Integer.toUnsignedLong(buffer.getInt(base + (d << 2), ByteOrder.BIG_ENDIAN));
            value = (value << segLen) | ((dw >>> (dwStart + 32 - segEnd)) & mask(segLen));
        }
        return value;
    }

    /** Writes {@code width} bits at {@code bitOff}, read-modify-write of every big-endian dword touched. */
    static void writeBits(MutableDirectBuffer buffer, int base, int bitOff, int width, long value) {
        int end = bitOff + width;
        int first = bitOff >>> 5;
        int last = (end - 1) >>> 5;
        for (int d = first; d <= last; d++) {
            int dwStart = d << 5;
            int segEnd = Math.min(end, dwStart + 32);
            int segLen = segEnd - Math.max(bitOff, dwStart);
            int shift = dwStart + 32 - segEnd;
            long part = (value >>> (end - segEnd)) & mask(segLen);
            long dwMask = mask(segLen) << shift;
            int index = base + (d << 2);
            long dw = Integer.toUnsignedLong(buffer.getInt(index, ByteOrder.BIG_ENDIAN));
            buffer.putInt(index, (int) ((dw & ~dwMask) | (part << shift)), ByteOrder.BIG_ENDIAN);
        }
    }

    @Override
    public String toString() {
        String where = String.format("bit 0x%x (byte 0x%x", bitOffset, bitOffset >>> 3);
        switch (kind) {
            case SCALAR:
                int hi = 31 - (bitOffset & 31);
                return name + " @ " + where + String.format(" bits %d:%d), %d bits",
                        hi, Math.max(hi - bitWidth + 1, 0), bitWidth) + (alias ? ", alias" : "");
            case BYTES:
                return name + " @ " + where + "), " + (bitWidth >>> 3) + " bytes";
            default:
                return name + " @ " + where + "), " + (count == FLEXIBLE ? "[]" : "[" + count + "]")
                        + " x " + bitWidth + " bits";
        }
    }
}
