package io.jhca.doorbell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class UarDoorbellTest {

    private final UnsafeBuffer uarPage = TestMemory.page(4096);
    private final UnsafeBuffer host = TestMemory.page(4096);
    private final RecordingMmioWindow window = new RecordingMmioWindow(uarPage);
    private final DoorbellRecord dbr = new DoorbellRecord().wrap(host, 0);

    /** A send ring with a control segment at 0x40: opmod_idx_opcode = 0x0012340a, qpn_ds = 0xabcdef03. */
    private UnsafeBuffer sqWithCtrl() {
        UnsafeBuffer sq = TestMemory.page(4096);
        sq.putInt(0x40, 0x0012340a, ByteOrder.BIG_ENDIAN);
        sq.putInt(0x44, 0xabcdef03, ByteOrder.BIG_ENDIAN);
        sq.putInt(0x48, 0x08, ByteOrder.BIG_ENDIAN);
        return sq;
    }

    @Test
    void ringStoresDbrThenOneEightByteDoorbellAndAlternatesHalves() {
        UarDoorbell bf = UarDoorbell.bfreg(window, 0, 1, 512);   // bfreg 1: 0xa00, halves of 256
        assertEquals(0xa00, bf.currentOffset());
        window.probe(dbr::sendCounter);
        UnsafeBuffer sq = sqWithCtrl();

        bf.ring(dbr, 0x11235, sq, 0x40);
        assertEquals("00001235", TestMemory.hex(host, 4, 4), "SND_DBR = be32(cur_post & 0xffff)");
        assertEquals("0012340aabcdef03", TestMemory.hex(uarPage, 0xa00, 8), "first 8 ctrl bytes, big-endian");
        assertEquals(1, window.count(), "one store");
        assertEquals(8, window.width(0), "of 8 bytes");
        assertEquals(0x1235, window.probed(0), "doorbell record written before the MMIO store");
        assertEquals(0xb00, bf.currentOffset());

        bf.ring(dbr, 0x11236, 0x0012350aabcdef03L);
        assertEquals("0012350aabcdef03", TestMemory.hex(uarPage, 0xb00, 8));
        assertEquals("0012340aabcdef03", TestMemory.hex(uarPage, 0xa00, 8), "first half untouched");
        assertEquals(0xb00, window.offset(1));
        assertEquals(0x1236, window.probed(1));
        assertEquals(0xa00, bf.currentOffset(), "back to the first half");
        assertEquals(2, window.count());
    }

    @Test
    void nonCachedUarAlwaysRingsTheSameAddress() {
        UarDoorbell nc = new UarDoorbell(window, 0x800, 0);
        for (int i = 0; i < 3; i++) {
            nc.ring(dbr, i, 0x1000L + i);
            assertEquals(0x800, window.offset(i));
        }
        assertEquals("0000000000001002", TestMemory.hex(uarPage, 0x800, 8));
    }

    @Test
    void manyRingsStayExact() {
        // Enough iterations for the JIT to compile the path in the default run; the -Xint run interprets it.
        UarDoorbell bf = UarDoorbell.bfreg(new MmioWindow(uarPage), 0, 0, 512);
        MmioWindow check = new MmioWindow(uarPage);
        for (int i = 0; i < 30_000; i++) {
            long ctrl = ((long) (i & 0xffff) << 40) | 0x0a00abcdef02L | ((long) i << 63);
            int expectAt = 0x800 + ((i & 1) << 8);
            bf.ring(dbr, i, ctrl);
            if (check.getLongBe(expectAt) != ctrl || dbr.sendCounter() != (i & 0xffff)) {
                throw new AssertionError("ring " + i + ": got " + Long.toHexString(check.getLongBe(expectAt)));
            }
        }
    }

    @Test
    void rejectsBadGeometry() {
        assertThrows(IllegalArgumentException.class, () -> UarDoorbell.bfreg(window, 0, 4, 512));
        assertThrows(IllegalArgumentException.class, () -> new UarDoorbell(window, 0x804, 256));
        assertThrows(IllegalArgumentException.class, () -> new UarDoorbell(window, 0xf00, 256));
        assertThrows(IllegalArgumentException.class, () -> new UarDoorbell(window, 0x800, 100));
        UarDoorbell bf = new UarDoorbell(window, 0x800, 256);
        assertThrows(IndexOutOfBoundsException.class, () -> bf.ring(dbr, 0, sqWithCtrl(), 4092));
        assertEquals(0, window.count());
    }
}
