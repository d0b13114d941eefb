package io.jhca.tests.harness;

import java.util.Arrays;
import java.util.zip.CRC32C;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Deterministic test payloads: the bytes of a message are a function of a seed, so the receiver can regenerate
 * and compare them, and a mismatch is reported by its first differing offset (never by printing bytes).
 * Generated and compared in 64 KiB chunks through byte arrays, so no unaligned wide access is made.
 */
public final class Payloads {
    private static final int CHUNK = 64 * 1024;

    private Payloads() {
    }

    /** Word {@code w} (8 bytes) of the payload with {@code seed}: a 64-bit mix; byte i is byte (i & 7) of word i/8. */
    private static long word(long seed, long w) {
        long x = seed * 0x9E3779B97F4A7C15L + w * 0xBF58476D1CE4E5B9L;
        x ^= x >>> 31;
        x *= 0x94D049BB133111EBL;
        x ^= x >>> 29;
        return x;
    }

    public static byte byteAt(long seed, long i) {
        return (byte) (word(seed, i >>> 3) >>> ((i & 7) << 3));
    }

    /** Bytes {@code [from, from + n)} of the payload with {@code seed} into {@code out[0..n)}. */
    static void generate(long seed, long from, byte[] out, int n) {
        int k = 0;
        while (k < n && ((from + k) & 7) != 0) {
            out[k] = byteAt(seed, from + k);
            k++;
        }
        while (k + 8 <= n) {
            long x = word(seed, (from + k) >>> 3);
            for (int j = 0; j < 8; j++) {
                out[k + j] = (byte) (x >>> (j << 3));
            }
            k += 8;
        }
        while (k < n) {
            out[k] = byteAt(seed, from + k);
            k++;
        }
    }

    public static void fill(MutableDirectBuffer buf, int off, int len, long seed) {
        fill(buf, off, 0, len, seed);
    }

    /** Fills {@code [off, off+len)} with bytes {@code [from, from+len)} of the payload of {@code seed}. */
    public static void fill(MutableDirectBuffer buf, int off, long from, int len, long seed) {
        byte[] chunk = new byte[Math.min(CHUNK, Math.max(len, 1))];
        for (int done = 0; done < len; ) {
            int n = Math.min(chunk.length, len - done);
            generate(seed, from + done, chunk, n);
            buf.putBytes(off + done, chunk, 0, n);
            done += n;
        }
    }

    /** Fills with one byte value (canaries, clearing). */
    public static void set(MutableDirectBuffer buf, int off, int len, byte value) {
        buf.setMemory(off, len, value);
    }

    /** Asserts {@code [off, off+len)} holds the payload of {@code seed}, naming the first wrong offset. */
    public static void assertPayload(DirectBuffer buf, int off, int len, long seed, String what) {
        assertPayload(buf, off, 0, len, seed, what);
    }

    /** Asserts {@code [off, off+len)} holds bytes {@code [from, from+len)} of the payload of {@code seed}. */
    public static void assertPayload(DirectBuffer buf, int off, long from, int len, long seed, String what) {
        byte[] want = new byte[Math.min(CHUNK, Math.max(len, 1))];
        byte[] got = new byte[want.length];
        for (int done = 0; done < len; ) {
            int n = Math.min(want.length, len - done);
            generate(seed, from + done, want, n);
            buf.getBytes(off + done, got, 0, n);
            int i = Arrays.mismatch(want, 0, n, got, 0, n);
            if (i >= 0) {
                fail(what + ": byte " + (from + done + i) + " of " + (from + len) + " is 0x" + hex(got[i]) + ", expected 0x" + hex(want[i]));
            }
            done += n;
        }
    }

    /** Asserts {@code [off, off+len)} is all {@code value} (untouched canary). */
    public static void assertFilled(DirectBuffer buf, int off, int len, byte value, String what) {
        for (int i = 0; i < len; i++) {
            byte got = buf.getByte(off + i);
            if (got != value) {
                fail(what + ": byte " + i + " of " + len + " is 0x" + hex(got) + ", expected untouched 0x" + hex(value));
            }
        }
    }

    /** Asserts two spans are equal, naming the first differing offset. */
    public static void assertSame(DirectBuffer a, int offA, DirectBuffer b, int offB, int len, String what) {
        for (int i = 0; i < len; i++) {
            if (a.getByte(offA + i) != b.getByte(offB + i)) {
                fail(what + ": byte " + i + " of " + len + " is 0x" + hex(b.getByte(offB + i)) + ", expected 0x"
                        + hex(a.getByte(offA + i)));
            }
        }
    }

    /** CRC-32C of a span. */
    public static long crc(DirectBuffer buf, long off, long len) {
        CRC32C crc = new CRC32C();
        byte[] chunk = new byte[CHUNK];
        for (long done = 0; done < len; ) {
            int n = (int) Math.min(chunk.length, len - done);
            buf.getBytes((int) (off + done), chunk, 0, n);
            crc.update(chunk, 0, n);
            done += n;
        }
        return crc.getValue();
    }

    /** CRC-32C of the payload of {@code seed} with {@code len} bytes, computed without a buffer. */
    public static long crcOf(long seed, long len) {
        CRC32C crc = new CRC32C();
        byte[] chunk = new byte[CHUNK];
        for (long done = 0; done < len; ) {
            int n = (int) Math.min(chunk.length, len - done);
            generate(seed, done, chunk, n);
            crc.update(chunk, 0, n);
            done += n;
        }
        return crc.getValue();
    }

    /** The span's CRC-32C equals that of the payload of {@code seed}: a whole-message check without printing it. */
    public static void assertCrc(DirectBuffer buf, long off, long len, long seed, String what) {
        assertEquals(Long.toHexString(crcOf(seed, len)), Long.toHexString(crc(buf, off, len)),
                what + ": CRC-32C of " + len + " bytes");
    }

    private static String hex(byte b) {
        return Integer.toHexString(b & 0xff);
    }
}
