package io.jhca.mlx5.wqe;

import static io.jhca.mlx5.wqe.GoldenC.hex;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class InlineSegTest {

    private static final int START = 64;
    private static final int END = START + 256;   // 4 WQEBBs

    private final UnsafeBuffer ring = new UnsafeBuffer(new byte[512]);
    private final UnsafeBuffer src = new UnsafeBuffer(new byte[256]);

    InlineSegTest() {
        ring.setMemory(0, ring.capacity(), (byte) 0xee);
        for (int i = 0; i < src.capacity(); i++) {
            src.putByte(i, (byte) i);
        }
    }

    @Test
    void payloadRunningPastTheRingEndContinuesAtTheStart() {
        int ds = InlineSeg.write(ring, START, END, END - 16, src, 0, 40);
        assertEquals(3, ds, "align(40 + 4, 16) / 16");
        assertEquals("80000028", hex(ring, END - 16, 4));
        assertEquals(hex(src, 0, 12), hex(ring, END - 12, 12), "first 12 bytes up to the ring end");
        assertEquals(hex(src, 12, 28), hex(ring, START, 28), "the other 28 at the ring start");
        assertEquals("00000000", hex(ring, START + 28, 4), "tail of the last DS zeroed");
        assertEquals("eeee", hex(ring, START + 32, 2), "nothing beyond the last DS");
        assertEquals("eeee", hex(ring, END, 2), "nothing past the ring end");
    }

    @Test
    void payloadEndingExactlyAtTheRingEndDoesNotWrap() {
        int ds = InlineSeg.write(ring, START, END, END - 32, src, 0, 28);
        assertEquals(2, ds);
        assertEquals(hex(src, 0, 28), hex(ring, END - 28, 28));
        assertEquals("eeee", hex(ring, START, 2));
        assertEquals("eeee", hex(ring, END, 2));
    }

    @Test
    void gatherOfSeveralSpans() {
        int end = InlineSeg.copyWrapped(ring, START, END, END - 12, src, 0, 8);
        end = InlineSeg.copyWrapped(ring, START, END, end, src, 100, 10);
        InlineSeg.setHeader(ring, END - 16, 18);
        assertEquals(START + 6, end);
        assertEquals("80000012" + hex(src, 0, 8) + hex(src, 100, 4), hex(ring, END - 16, 16));
        assertEquals(hex(src, 104, 6), hex(ring, START, 6));
    }

    @Test
    void zeroLengthWritesNothing() {
        assertEquals(0, InlineSeg.write(ring, START, END, START, src, 0, 0));
        assertEquals(0, InlineSeg.ds(0));
        assertEquals("eeeeeeee", hex(ring, START, 4));
    }

    @Test
    void dsCount() {
        assertEquals(1, InlineSeg.ds(1));
        assertEquals(1, InlineSeg.ds(12));
        assertEquals(2, InlineSeg.ds(13));
        assertEquals(61, InlineSeg.ds(60 * 16 + 12));
    }

    @Test
    void rejectsBadPlacement() {
        assertThrows(IllegalArgumentException.class, () -> InlineSeg.write(ring, START, END, START + 8, src, 0, 4));
        assertThrows(IllegalArgumentException.class, () -> InlineSeg.write(ring, START, END, END, src, 0, 4));
        assertThrows(IllegalArgumentException.class, () -> InlineSeg.write(ring, START, START + 100, START, src, 0, 4));
        assertThrows(IllegalArgumentException.class, () -> InlineSeg.write(ring, START, END, START, src, 0, 253));
        assertThrows(IndexOutOfBoundsException.class, () -> InlineSeg.write(ring, START, END, START, src, 250, 10));
        assertThrows(IllegalArgumentException.class, () -> InlineSeg.write(ring, 0, 1024, 0, src, 0, 4));
        assertEquals("eeeeeeee", hex(ring, START, 4));
    }

    @Test
    void receiveWqeTerminator() {
        RecvWqeLayout.setSge(ring, 0, 0, 100, 0x1234, 0x1000);
        RecvWqeLayout.finish(ring, 0, 1, 4);
        assertEquals("00000064" + "00001234" + "0000000000001000" + "00000000" + "00000100" + "0000000000000000", hex(ring, 0, 32));
        assertEquals("eeee", hex(ring, 32, 2));
        RecvWqeLayout.finish(ring, 64, 4, 4);
        assertEquals("eeee", hex(ring, 64 + 64, 2), "a full WQE has no terminator");
        assertThrows(IllegalArgumentException.class, () -> RecvWqeLayout.finish(ring, 0, 5, 4));
    }
}
