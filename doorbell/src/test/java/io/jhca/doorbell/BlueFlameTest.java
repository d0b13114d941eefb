package io.jhca.doorbell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class BlueFlameTest {

    private static final int SQ_START = 0x100;          // ring after a 256-byte RQ, as rdma-core lays out a QP buffer
    private static final int SQ_END = SQ_START + 4 * 64; // 4 WQEBBs

    private final UnsafeBuffer uarPage = TestMemory.page(4096);
    private final UnsafeBuffer sq = TestMemory.page(4096);
    private final UnsafeBuffer host = TestMemory.page(4096);
    private final DoorbellRecord dbr = new DoorbellRecord().wrap(host, 0);
    private final RecordingMmioWindow window = new RecordingMmioWindow(uarPage);
    private final BlueFlame bf = new BlueFlame(UarDoorbell.bfreg(window, 0, 0, 512));

    BlueFlameTest() {
        for (int i = SQ_START; i < SQ_END; i++) {
            sq.putByte(i, (byte) (i * 7 + 1));
        }
    }

    @Test
    void copiesAlignedWqeInChunksAndAlternatesHalves() {
        window.probe(dbr::sendCounter);
        bf.ring(dbr, 2, sq, SQ_START, SQ_END, SQ_START, 5);  // 80 bytes -> two 64-byte chunks
        assertEquals(TestMemory.hex(sq, SQ_START, 128), TestMemory.hex(uarPage, 0x800, 128));
        assertEquals(16, window.count());
        for (int i = 0; i < 16; i++) {
            assertEquals(0x800 + 8 * i, window.offset(i), "ascending 8-byte stores");
            assertEquals(8, window.width(i));
            assertEquals(2, window.probed(i), "doorbell record written before the copy");
        }
        assertEquals("00000002", TestMemory.hex(host, 4, 4), "SND_DBR, big-endian");

        window.clear();
        bf.ring(dbr, 3, sq, SQ_START, SQ_END, SQ_START + 128, 2);   // 32 bytes -> one chunk, second half
        assertEquals(TestMemory.hex(sq, SQ_START + 128, 64), TestMemory.hex(uarPage, 0x900, 64));
        assertEquals(8, window.count());
        assertEquals(0x900, window.offset(0));

        window.clear();
        bf.ring(dbr, 4, sq, SQ_START, SQ_END, SQ_START + 64, 4);
        assertEquals(0x800, window.offset(0), "halves alternate");
    }

    @Test
    void wqeRunningPastTheRingEndContinuesAtSlotZero() {
        bf.ring(dbr, 5, sq, SQ_START, SQ_END, SQ_END - 64, 12);   // 192 bytes from the last slot
        assertEquals(TestMemory.hex(sq, SQ_END - 64, 64), TestMemory.hex(uarPage, 0x800, 64));
        assertEquals(TestMemory.hex(sq, SQ_START, 128), TestMemory.hex(uarPage, 0x840, 128));
    }

    @Test
    void sizeLimitsFollowPostSendDb() {
        assertFalse(bf.fits(1), "a one-DS WQE always goes by plain doorbell");
        assertTrue(bf.fits(2));
        assertTrue(bf.fits(16), "256 bytes = a whole half");
        assertFalse(bf.fits(17));
        assertThrows(IllegalArgumentException.class, () -> bf.ring(dbr, 0, sq, SQ_START, SQ_END, SQ_START, 17));
        assertThrows(IllegalArgumentException.class, () -> bf.ring(dbr, 0, sq, SQ_START, SQ_END, SQ_START + 16, 4));
        assertThrows(IllegalArgumentException.class, () -> bf.ring(dbr, 0, sq, SQ_START, SQ_END, SQ_END, 4));
        assertThrows(IllegalArgumentException.class, () -> new BlueFlame(new UarDoorbell(window, 0x800, 0)));
        assertEquals(0, window.count());
    }
}
