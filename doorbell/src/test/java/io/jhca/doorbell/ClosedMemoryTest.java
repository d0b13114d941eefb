package io.jhca.doorbell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * The doorbell classes check an access once and then touch memory raw, so their own check must also catch memory
 * that has closed (a DMA region's view drops to capacity 0): an exception naming the close, never a store into
 * memory the region gave up.
 */
class ClosedMemoryTest {

    @Test
    void doorbellRecordOfAClosedRegionThrows() {
        DmaRegion region = DmaMemory.allocate(4096);
        DoorbellRecord dbr = new DoorbellRecord().wrap(region.buffer(), 4088);   // the region's last 8 bytes
        dbr.setSendCounter(0x1234);
        assertEquals(0x1234, dbr.sendCounter());
        assertEquals(0x1234, region.buffer().getInt(4092, ByteOrder.BIG_ENDIAN), "SND_DBR, big-endian, last word");
        region.close();
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> dbr.setSendCounter(1));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(IndexOutOfBoundsException.class, dbr::consumerIndex);
    }

    @Test
    void mmioWindowOfAClosedRegionThrows() {
        DmaRegion bar = DmaMemory.allocate(4096);
        MmioWindow window = new MmioWindow(bar.buffer());
        window.putDoorbellBe(4088, 0x0102030405060708L);   // the window's last 8 bytes
        assertEquals(0x0102030405060708L, window.getLongBe(4088));
        assertThrows(IndexOutOfBoundsException.class, () -> window.putDoorbellBe(4096, 1), "one past the end");
        assertThrows(IllegalArgumentException.class, () -> window.putIntBe(4090, 1), "misaligned");
        bar.close();
        IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, () -> window.putDoorbellBe(0, 1));
        assertTrue(e.getMessage().contains("closed"), e.getMessage());
        assertThrows(IndexOutOfBoundsException.class, () -> window.putIntBe(0, 1));
        assertThrows(IndexOutOfBoundsException.class, () -> window.getIntBe(0));
    }

    @Test
    void doorbellOfAClosedSendRingThrowsBeforeAnyStore() {
        UnsafeBuffer uar = TestMemory.page(4096);
        RecordingMmioWindow window = new RecordingMmioWindow(uar);
        DoorbellRecord dbr = new DoorbellRecord().wrap(TestMemory.page(64), 0);
        UarDoorbell bf = UarDoorbell.bfreg(window, 0, 0, 512);
        DmaRegion region = DmaMemory.allocate(4096);
        UnsafeBuffer sq = region.buffer();   // the view the send queue holds
        sq.putLong(4088, 0x1122334455667788L, ByteOrder.BIG_ENDIAN);   // a control word in the last 8 bytes
        bf.ring(dbr, 1, sq, 4088);
        assertEquals("1122334455667788", TestMemory.hex(uar, 0x800, 8));
        assertThrows(IndexOutOfBoundsException.class, () -> bf.ring(dbr, 2, sq, 4089), "one past the last word");
        region.close();
        assertThrows(IndexOutOfBoundsException.class, () -> bf.ring(dbr, 2, sq, 0));
        assertEquals(1, window.count(), "no doorbell after the ring closed");
        assertEquals(1, dbr.sendCounter(), "nor a record update");
    }
}
