package io.jhca.lab;

import io.jhca.verbs.Gid;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PingpongDestTest {
    /** rocev2.md section 4.1: the verified example message of ibv_rc_pingpong. */
    static final String SPEC_EXAMPLE = "0000:000011:d24ed4:00000000000000000000ffff0a140001";

    static byte[] wire(String text) {
        byte[] b = new byte[PingpongDest.SIZE];
        byte[] t = text.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(t, 0, b, 0, t.length);
        return b;
    }

    @Test
    void sizeIsSizeofTheCTemplate() {
        // char msg[sizeof "0000:000000:000000:00000000000000000000000000000000"]
        assertEquals("0000:000000:000000:00000000000000000000000000000000".length() + 1, PingpongDest.SIZE);
        assertEquals(52, PingpongDest.SIZE);
    }

    @Test
    void parsesTheSpecExample() {
        PingpongDest d = PingpongDest.decode(wire(SPEC_EXAMPLE));
        assertEquals(0, d.lid());
        assertEquals(0x11, d.qpn());
        assertEquals(0xd24ed4, d.psn());
        assertEquals(Gid.parse("0000:0000:0000:0000:0000:ffff:0a14:0001"), d.gid());
        assertEquals("10.20.0.1", d.gid().toInetAddress().getHostAddress());
    }

    @Test
    void encodesToTheExactBytes() {
        PingpongDest d = new PingpongDest(0, 0x11, 0xd24ed4, Gid.parse("00000000000000000000ffff0a140001"));
        byte[] msg = d.encode();
        assertEquals(52, msg.length);
        assertEquals(0, msg[51], "NUL terminator");
        assertArrayEquals(wire(SPEC_EXAMPLE), msg);
        assertEquals(SPEC_EXAMPLE, d.text());
    }

    @Test
    void roundTripsExtremes() {
        for (PingpongDest d : new PingpongDest[] {
            new PingpongDest(0xffff, 0xffffff, 0xffffff, Gid.parse("ffffffffffffffffffffffffffffffff")),
            new PingpongDest(0, 0, 0, Gid.ZERO),
            new PingpongDest(0x1234, 0xabcdef, 0x000001, Gid.parse("fe800000000000000200ff00fe000001")),
        }) {
            assertEquals(d, PingpongDest.decode(d.encode()));
        }
    }

    @Test
    void doneIsFiveBytesWithNul() {
        assertArrayEquals("done\0".getBytes(StandardCharsets.US_ASCII), PingpongDest.DONE);
    }

    @Test
    void refusesMalformedMessages() {
        assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(new byte[51]));
        byte[] noNul = new byte[52];
        Arrays.fill(noNul, (byte) '0');
        assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(noNul));
        assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(wire("0000:000011:d24ed4")));
        assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(wire("0000:000011:d24ed4:0000")));
        assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(wire("zzzz:000011:d24ed4:00000000000000000000ffff0a140001")));
        assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(wire("10000:00011:d24ed4:00000000000000000000ffff0a140001")));
        assertThrows(IllegalArgumentException.class, () -> new PingpongDest(0, 1 << 24, 0, Gid.ZERO));
    }

    @Test
    void refusesWhatOnlyALenientParseWouldTake() {
        String gid = "00000000000000000000ffff0a140001";
        String[][] cases = {
            {":000011:d24ed4:" + gid, "LID '' is not a hex number"},
            {"-1:000011:d24ed4:" + gid, "LID '-1' is not a hex number"},
            {"000000000:11:1:" + gid, "LID '000000000' is not a hex number"},   // nine digits
            {"0000:000011:d24ed4:+f" + gid.substring(2), "GID must be 32 hex digits"},
        };
        for (String[] c : cases) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> PingpongDest.decode(wire(c[0])), c[0]);
            assertTrue(e.getMessage().contains(c[1]), c[0] + ": " + e.getMessage());
        }
        // 52 characters and no NUL: a LID of five digits makes a text that parses, if the NUL is not required
        byte[] noNul = ("00000:000011:d24ed4:" + gid).getBytes(StandardCharsets.US_ASCII);
        assertEquals(PingpongDest.SIZE, noNul.length);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(noNul));
        assertTrue(e.getMessage().contains("not NUL-terminated"), e.getMessage());
        // the size is the C template's: a good message with bytes after its NUL is not one
        byte[] longer = Arrays.copyOf(wire(SPEC_EXAMPLE), 60);
        e = assertThrows(IllegalArgumentException.class, () -> PingpongDest.decode(longer));
        assertTrue(e.getMessage().contains("got 60"), e.getMessage());
    }
}
