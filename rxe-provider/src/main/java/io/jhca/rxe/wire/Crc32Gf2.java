package io.jhca.rxe.wire;

/**
 * Linear algebra over GF(2) on the CRC-32 register (reflected polynomial 0xEDB88320, the zlib / Ethernet /
 * ICRC CRC), for recovering an unknown 16-bit field from a CRC (rocev2.md §2.4).
 *
 * <p>Facts used. The register update for one byte, {@code r' = T[(r ^ b) & 0xFF] ^ (r >>> 8)}, is linear in
 * (r, b) jointly, so the final register is {@code L1(init) ^ L2(message)}. Changing two message bytes that are
 * followed by n further bytes changes the CRC by {@code Z_n(F(δ))}: F = the register after feeding the two
 * changed bytes δ into a zero register, Z_n = feeding n zero bytes. Z_n is invertible (one zero bit,
 * {@code r -> (r >>> 1) ^ (r & 1 ? POLY : 0)}, is undone by looking at bit 31, because POLY has bit 31 set), so
 * {@link #unshiftZeroBytes} applies Z_n^-1 with one precomputed matrix per power of two (as zlib's
 * crc32_combine squares its zeros operator), and {@link #solveTwoBytes} inverts F: F is injective on 16 bits and
 * its image has dimension 16 in the 32-bit space, so half of the CRC bits pin the field and the other half check.
 */
final class Crc32Gf2 {

    /** Reflected CRC-32 polynomial (zlib, java.util.zip.CRC32). */
    static final int POLY = 0xEDB88320;
    /** Register after feeding byte b into a zero register. */
    static final int[] TABLE = new int[256];
    /** TABLE[b] >>> 24 is a bijection of b (checked below); this is its inverse. */
    private static final int[] TOP_BYTE_INVERSE = new int[256];
    /** UNSHIFT[k]: Z_(2^k)^-1 as four byte-sliced lookup tables of 256 entries, k = 0..15. */
    private static final int[][] UNSHIFT = new int[16][];

    static {
        for (int b = 0; b < 256; b++) {
            int r = b;
            for (int i = 0; i < 8; i++) {
                r = (r >>> 1) ^ ((r & 1) != 0 ? POLY : 0);
            }
            TABLE[b] = r;
        }
        java.util.Arrays.fill(TOP_BYTE_INVERSE, -1);
        for (int b = 0; b < 256; b++) {
            final int top = TABLE[b] >>> 24;
            if (TOP_BYTE_INVERSE[top] != -1) {
                throw new ExceptionInInitializerError("CRC-32 table top bytes are not a bijection");
            }
            TOP_BYTE_INVERSE[top] = b;
        }
        int[] columns = new int[32]; // column j = image of basis vector 1 << j
        for (int j = 0; j < 32; j++) {
            int r = 1 << j;
            for (int i = 0; i < 8; i++) {
                r = unshiftBit(r);
            }
            columns[j] = r;
        }
        for (int k = 0; k < UNSHIFT.length; k++) {
            UNSHIFT[k] = slices(columns);
            final int[] squared = new int[32];
            for (int j = 0; j < 32; j++) {
                squared[j] = apply(columns, apply(columns, 1 << j));
            }
            columns = squared;
        }
    }

    private Crc32Gf2() {
    }

    /** Undoes feeding one zero bit. */
    static int unshiftBit(final int r) {
        return r < 0 ? ((r ^ POLY) << 1) | 1 : r << 1;
    }

    private static int apply(final int[] columns, final int v) {
        int r = 0;
        for (int j = 0; j < 32; j++) {
            if ((v >>> j & 1) != 0) {
                r ^= columns[j];
            }
        }
        return r;
    }

    private static int[] slices(final int[] columns) {
        final int[] t = new int[1024];
        for (int s = 0; s < 4; s++) {
            for (int v = 0; v < 256; v++) {
                t[s * 256 + v] = apply(columns, v << (8 * s));
            }
        }
        return t;
    }

    /** Register after feeding {@code n} zero bytes into register {@code r} (forward, for tests and reference). */
    static int shiftZeroBytes(int r, final int n) {
        for (int i = 0; i < n; i++) {
            r = TABLE[r & 0xFF] ^ (r >>> 8);
        }
        return r;
    }

    /** Z_n^-1: the register that {@code n} zero bytes (0..65535) turn into {@code r}. At most 16 × 4 lookups. */
    static int unshiftZeroBytes(int r, final int n) {
        if ((n & ~0xFFFF) != 0) {
            throw new IllegalArgumentException("zero-byte count must be 0..65535: " + n);
        }
        for (int k = 0; k < 16; k++) {
            if ((n >>> k & 1) != 0) {
                final int[] t = UNSHIFT[k];
                r = t[r & 0xFF] ^ t[256 + (r >>> 8 & 0xFF)] ^ t[512 + (r >>> 16 & 0xFF)] ^ t[768 + (r >>> 24)];
            }
        }
        return r;
    }

    /** F: register after feeding the big-endian 16-bit {@code value} (high byte first) into a zero register. */
    static int twoBytes(final int value) {
        final int r1 = TABLE[value >>> 8 & 0xFF];
        return TABLE[(r1 ^ value) & 0xFF] ^ (r1 >>> 8);
    }

    /**
     * F^-1: the 16-bit value whose {@link #twoBytes} is {@code r}, or -1 if {@code r} is not in F's image. The top
     * byte of r names the last table entry used, which names the first; the final comparison checks all 32 bits.
     */
    static int solveTwoBytes(final int r) {
        final int x = TOP_BYTE_INVERSE[r >>> 24];      // r = TABLE[x] ^ (TABLE[hi] >>> 8)
        final int hi = TOP_BYTE_INVERSE[(r ^ TABLE[x]) >>> 16 & 0xFF];
        final int lo = (x ^ TABLE[hi]) & 0xFF;         // x = (TABLE[hi] ^ lo) & 0xFF
        final int value = hi << 8 | lo;
        return twoBytes(value) == r ? value : -1;
    }
}
