package io.jhca.lab;

import io.jhca.verbs.Gid;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PerftestDestTest {
    /** rocev2.md section 4.2: the example key string (108 bytes with its NUL). */
    static final String SPEC_EXAMPLE =
            "0000:0001:000013:3d508a:000004a6:00007dc6b256a000:00:00:00:00:00:00:00:00:00:00:ff:ff:0a:14:00:01:00000000:";

    static byte[] wire(String text, int size) {
        byte[] b = new byte[size];
        byte[] t = text.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(t, 0, b, 0, t.length);
        return b;
    }

    @Test
    void sizesAreKeyMsgSizeAndKeyMsgSizeGid() {
        assertEquals(107, SPEC_EXAMPLE.length());
        assertEquals(108, PerftestDest.SIZE_GID);
        // KEY_PRINT_FMT "%04x:%04x:%06x:%06x:%08x:%016llx:%08x" is 58 characters, plus the NUL
        assertEquals(59, PerftestDest.SIZE_NO_GID);
    }

    @Test
    void parsesTheSpecExample() {
        PerftestDest d = PerftestDest.decode(wire(SPEC_EXAMPLE, 108));
        assertEquals(0, d.lid());
        assertEquals(1, d.outReads());
        assertEquals(0x13, d.qpn());
        assertEquals(0x3d508a, d.psn());
        assertEquals(0x4a6, d.rkey());
        assertEquals(0x7dc6b256a000L, d.vaddr());
        assertEquals(Gid.parse("00000000000000000000ffff0a140001"), d.gid());
        assertEquals(0, d.srqn());
    }

    @Test
    void encodesTheSpecExampleByteForByte() {
        PerftestDest d = new PerftestDest(0, 1, 0x13, 0x3d508a, 0x4a6, 0x7dc6b256a000L,
                Gid.parse("00000000000000000000ffff0a140001"), 0);
        byte[] msg = d.encode();
        assertEquals(108, msg.length);
        assertEquals(0, msg[107]);
        assertArrayEquals(wire(SPEC_EXAMPLE, 108), msg);
    }

    @Test
    void shortFormWithoutGid() {
        PerftestDest d = new PerftestDest(0x1a, 0x10, 0x123456, 0xabcdef, 0xdeadbeef, 0xffffffffffffffffL, null, 7);
        byte[] msg = d.encode();
        assertEquals(59, msg.length);
        assertEquals("001a:0010:123456:abcdef:deadbeef:ffffffffffffffff:00000007",
                new String(msg, 0, 58, StandardCharsets.US_ASCII));
        PerftestDest back = PerftestDest.decode(msg);
        assertEquals(d, back);
        assertNull(back.gid());
    }

    @Test
    void roundTripsFullRanges() {
        PerftestDest d = new PerftestDest(0xffff, 0xffff, 0xffffff, 0xffffff, -1, -1L,
                Gid.parse("ffffffffffffffffffffffffffffffff"), -1);
        assertEquals(d, PerftestDest.decode(d.encode()));
        assertEquals(108, d.encode().length);
    }

    @Test
    void refusesMalformedMessages() {
        assertThrows(IllegalArgumentException.class, () -> PerftestDest.decode(new byte[100]));
        byte[] noNul = wire(SPEC_EXAMPLE, 108);
        noNul[107] = 'x';
        assertThrows(IllegalArgumentException.class, () -> PerftestDest.decode(noNul));
        String missingByte = SPEC_EXAMPLE.replace(":0a:14:00:01:", ":0a:14:00:");
        assertThrows(IllegalArgumentException.class, () -> PerftestDest.decode(wire(missingByte, 108)));
        String badHex = SPEC_EXAMPLE.replace("3d508a", "3d5g8a");
        assertThrows(IllegalArgumentException.class, () -> PerftestDest.decode(wire(badHex, 108)));
        String gidByteTooBig = SPEC_EXAMPLE.replace(":ff:ff:", ":fff:f:");
        assertThrows(IllegalArgumentException.class, () -> PerftestDest.decode(wire(gidByteTooBig, 108)));
    }

    /** A GID key of the spec example with LID and OUT_READS shortened to one digit: room for a field to grow. */
    private static final String ROOMY = SPEC_EXAMPLE.replaceFirst("^0000:0001:", "0:1:");

    @Test
    void refusesKeysThatParseOnlyLeniently() {
        // each names the field at fault; sscanf's "%x" would take a sign, leading zeros or trailing bytes, and a
        // peer that sends them does not send what perftest's KEY_PRINT_FMT prints
        String[][] cases = {
            {ROOMY + "zz", "fields"},                                             // bytes after SRQN's ':'
            {ROOMY.replace(":000004a6:", ":-0000001:"), "RKEY"},                   // a sign, taken as 0xffffffff
            {ROOMY.replace(":00007dc6b256a000:", ":+0007dc6b256a000:"), "VADDR"},
            {ROOMY.replace(":00007dc6b256a000:", ":000007dc6b256a000:"), "VADDR"}, // 17 digits
            {ROOMY.replace(":000013:", ":1000013:"), "QPN"},                       // 25 bits
            {ROOMY.replace(":ff:ff:", ":100:ff:"), "GID byte 10"},                  // 0x100 would be byte 0
        };
        for (String[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PerftestDest.decode(wire(c[0], PerftestDest.SIZE_GID)), c[0]);
            assertTrue(e.getMessage().contains(c[1]), c[0] + ": " + e.getMessage());
        }
        // the size says the form: a short key in a buffer of neither size is no key
        byte[] shortKey = new PerftestDest(1, 1, 1, 1, 1, 1, null, 0).encode();
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> PerftestDest.decode(java.util.Arrays.copyOf(shortKey, 100)));
        assertTrue(e.getMessage().contains("got 100"), e.getMessage());
    }

    @Test
    void aBinaryKeyPastItsFieldsBitsIsRefusedNotCut() {
        // with -R, struct pingpong_dest carries LID, OUT_READS, QPN and PSN as 32-bit ints, of which perftest fills 16
        // or 24 bits: a QPN of 0x1000011 cut to 0x11 would connect to another QP, a negative one is none
        byte[] good = new PerftestDest(1, 1, 0x11, 0x22, 5, 0x1000, null, 0).encodeBinary();
        Object[][] cases = {{0, 0x10000, "LID"}, {4, 0x10000, "OUT_READS"}, {8, 0x1000011, "QPN"}, {8, -1, "QPN"},
            {12, 0x1000022, "PSN"}};
        for (Object[] c : cases) {
            byte[] b = good.clone();
            java.nio.ByteBuffer.wrap(b).putInt((int) c[0], (int) c[1]);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PerftestDest.decodeBinary(b),
                    c[2] + " " + c[1]);
            assertTrue(e.getMessage().startsWith(c[2] + " ") && e.getMessage().contains("out of range"),
                    e.getMessage());
        }
    }
}
