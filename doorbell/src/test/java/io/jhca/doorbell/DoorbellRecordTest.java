package io.jhca.doorbell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class DoorbellRecordTest {

    private final UnsafeBuffer mem = TestMemory.page(4096);
    private final DoorbellRecord dbr = new DoorbellRecord().wrap(mem, 64);

    @Test
    void qpCountersAreBe32OfSixteenBits() {
        dbr.setRecvCounter(0x12345);
        dbr.setSendCounter(0xffff + 2);
        assertEquals("00002345" + "00000001", TestMemory.hex(mem, 64, 8));
        assertEquals(0x2345, dbr.recvCounter());
        assertEquals(1, dbr.sendCounter());
    }

    @Test
    void cqConsumerIndexIsBe32OfTwentyFourBits() {
        dbr.setConsumerIndex(0x7abcdef1);
        dbr.setArmWord(0x21123456);
        assertEquals("00bcdef1" + "21123456", TestMemory.hex(mem, 64, 8));
        assertEquals(0xbcdef1, dbr.consumerIndex());
        assertEquals(0x21123456, dbr.armWord());
    }

    @Test
    void checksPlacement() {
        assertThrows(IndexOutOfBoundsException.class, () -> new DoorbellRecord().wrap(mem, 4096 - 4));
        assertThrows(IllegalArgumentException.class, () -> new DoorbellRecord().wrap(mem, 4));
        assertThrows(IllegalStateException.class, () -> new DoorbellRecord().setSendCounter(1));
    }
}
