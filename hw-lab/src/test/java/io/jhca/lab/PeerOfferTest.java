package io.jhca.lab;

import static io.jhca.lab.PerftestCommTest.io;
import static io.jhca.lab.PerftestCommTest.pair;
import static io.jhca.lab.PerftestCommTest.read;
import static io.jhca.lab.PerftestCommTest.version;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The warm-up offer in perftest's version bytes: where it sits (after the version string's NUL, which is all C
 * perftest reads), that C perftest's bytes carry none, and the rule by which both sides reach the same count.
 */
@Timeout(30)
class PeerOfferTest {

    @Test
    void sitsAfterTheVersionStringAndItsNul() {
        byte[] b = version(PerftestComm.VERSION);
        new PeerOffer(20000, false, false).writeInto(b);
        byte[] want = {'6', '.', '0', '6', 0, 'j', 'h', 'c', 'a', 0, 0, 0x4e, 0x20, 0, 0, 0};
        assertArrayEquals(want, b, "20000 = 0x4e20 big-endian, flag 0, the last two bytes NUL");
        new PeerOffer(0x01020304, true, false).writeInto(b);
        assertArrayEquals(new byte[] {'j', 'h', 'c', 'a', 1, 2, 3, 4, 1}, java.util.Arrays.copyOfRange(b, 5, 14));
        new PeerOffer(20000, false, true).writeInto(b);
        assertEquals(2, b[13], "the floors' flag is bit 1 of the flag byte");
        new PeerOffer(20000, true, true).writeInto(b);
        assertEquals(3, b[13]);
        b[13] = 1;   // what an hwlab from before the floors sends: --warmup given, no floors
        assertEquals(new PeerOffer(20000, true, false), PeerOffer.readFrom(b));
        int nul = 0;
        while (b[nul] != 0) {
            nul++;
        }
        assertEquals(PerftestComm.VERSION, new String(b, 0, nul, StandardCharsets.US_ASCII),
                "the string C perftest reads (atof) is the version alone");
    }

    @Test
    void readsBackWhatWasWritten() {
        for (int iters : new int[] {0, 1, 255, 256, 20000, Integer.MAX_VALUE}) {
            for (boolean given : new boolean[] {false, true}) {
                for (boolean floors : new boolean[] {false, true}) {
                    byte[] b = version("6.06");
                    new PeerOffer(iters, given, floors).writeInto(b);
                    assertEquals(new PeerOffer(iters, given, floors), PeerOffer.readFrom(b), iters + " " + given + " " + floors);
                }
            }
        }
    }

    @Test
    void perftestsBytesCarryNone() {
        assertNull(PeerOffer.readFrom(version("6.06")), "strncpy pads with NULs");
        assertNull(PeerOffer.readFrom(version("6.29")));
        assertNull(PeerOffer.readFrom("0123456789abcdef".getBytes(StandardCharsets.US_ASCII)), "no NUL at all");
        byte[] longer = version("6.06.1");
        new PeerOffer(5, true, false).writeInto(longer);
        assertEquals(new PeerOffer(5, true, false), PeerOffer.readFrom(longer), "after a longer version too, if it fits");
        byte[] tooLong = version("6.06.1a");
        assertThrows(IllegalArgumentException.class, () -> new PeerOffer(5, true, false).writeInto(tooLong));
        byte[] other = version("6.06");
        other[5] = 'j';
        other[6] = 'h';
        other[7] = 'c';
        other[8] = 'x';
        assertNull(PeerOffer.readFrom(other), "a tag of three right bytes is no tag");
        byte[] negative = version("6.06");
        new PeerOffer(20000, false, false).writeInto(negative);
        negative[9] = (byte) 0x80;
        assertNull(PeerOffer.readFrom(negative), "a count this code never sends is taken as no offer");
    }

    @Test
    void bothSidesReachTheSameCount() throws IOException {
        PeerOffer def = new PeerOffer(20000, false, false);
        PeerOffer seven = new PeerOffer(7, true, false);
        PeerOffer zero = new PeerOffer(0, true, false);
        assertEquals(0, PeerOffer.agree(def, null, 0), "C perftest: no warm-up unless given");
        assertEquals(7, PeerOffer.agree(seven, null, 7), "given against C perftest: the user's word");
        assertEquals(20000, PeerOffer.agree(def, def, 0), "two hwlab sides with defaults");
        assertEquals(20000, PeerOffer.agree(def, new PeerOffer(5000, false, false), 0));
        assertEquals(20000, PeerOffer.agree(new PeerOffer(5000, false, false), def, 0), "the larger, from either side");
        assertEquals(7, PeerOffer.agree(seven, def, 7), "given here wins over the peer's default");
        assertEquals(7, PeerOffer.agree(def, seven, 0), "given there wins over this side's default");
        assertEquals(0, PeerOffer.agree(zero, def, 0), "--warmup 0 on one side turns it off for both");
        assertEquals(0, PeerOffer.agree(def, zero, 0));
        assertEquals(7, PeerOffer.agree(seven, seven, 7));
        IOException here = assertThrows(IOException.class, () -> PeerOffer.agree(seven, new PeerOffer(8, true, false), 7));
        assertTrue(here.getMessage().contains("--warmup 7 here and 8 at the peer"), here.getMessage());
        IOException there = assertThrows(IOException.class, () -> PeerOffer.agree(new PeerOffer(8, true, false), seven, 8));
        assertTrue(there.getMessage().contains("--warmup 8 here and 7 at the peer"), there.getMessage());
    }

    @Test
    void theExchangeCarriesItAndReadsThePeers() throws Exception {
        byte[] peer = version("6.06");
        new PeerOffer(300, true, false).writeInto(peer);
        byte[][] sent = new byte[1][];
        Object[] r = pair(true, (in, out) -> {
            sent[0] = read(in, 16);
            out.write(peer);
        }, io(c -> new Object[] {c.exchangeVersions(new PeerOffer(20000, false, false)), c.peerOffer()}));
        assertEquals("6.06", r[0]);
        assertEquals(new PeerOffer(300, true, false), r[1]);
        assertEquals(new PeerOffer(20000, false, false), PeerOffer.readFrom(sent[0]));

        Object[] c = pair(false, (in, out) -> {
            out.write(version("6.06"));
            read(in, 16);
        }, io(comm -> new Object[] {comm.exchangeVersions(new PeerOffer(20000, false, false)), comm.peerOffer()}));
        assertEquals("6.06", c[0]);
        assertNull(c[1], "a C perftest peer offers nothing");
    }
}
