package io.jhca.doorbell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class CqArmTest {

    private final UnsafeBuffer uarPage = TestMemory.page(4096);
    private final UnsafeBuffer host = TestMemory.page(4096);
    private final RecordingMmioWindow window = new RecordingMmioWindow(uarPage);
    private final DoorbellRecord dbr = new DoorbellRecord().wrap(host, 128);

    @Test
    void armWritesRecordThenOneDoorbellAtUarPlus0x20() {
        CqArm arm = new CqArm(window, dbr, 0xabcdef);
        window.probe(dbr::armWord);
        arm.arm(6, 0x1123456, true);   // sn 6 & 3 = 2, ci masked to 24 bits, REQ_NOT_SOL
        assertEquals("21123456", TestMemory.hex(host, 132, 4), "ARM_DB = be32(sn<<28 | 1<<24 | ci)");
        assertEquals("00000000", TestMemory.hex(host, 128, 4), "SET_CI untouched");
        assertEquals("2112345600abcdef", TestMemory.hex(uarPage, 0x20, 8), "be64(word << 32 | cqn)");
        assertEquals(1, window.count());
        assertEquals(0x20, window.offset(0));
        assertEquals(8, window.width(0));
        assertEquals(0x21123456, window.probed(0), "record before doorbell");

        arm.arm(3, 0, false);
        assertEquals("3000000000abcdef", TestMemory.hex(uarPage, 0x20, 8));
    }

    @Test
    void encodings() {
        assertEquals(0x30ffffff, CqArm.armWord(7, -1, false));
        assertEquals(0x01000000, CqArm.armWord(0, 0, true));
        assertEquals(0x8000000000000001L, CqArm.doorbell(0x80000000, 1));
        assertEquals(0x00000001ffffffffL, CqArm.doorbell(1, -1), "cqn is not sign-extended");
    }

    @Test
    void uarPageInsideALargerWindow() {
        UnsafeBuffer barMemory = TestMemory.page(2 * 4096);
        MmioWindow bar = new MmioWindow(barMemory);   // UAR page 1 = BAR + 4 KiB
        new CqArm(bar, 4096, dbr, 5).arm(0, 9, false);
        assertEquals("0000000900000005", TestMemory.hex(barMemory, 4096 + 0x20, 8));
        assertEquals("0000000000000000", TestMemory.hex(barMemory, 0x20, 8));
        assertThrows(IllegalArgumentException.class, () -> new CqArm(bar, 2 * 4096, dbr, 5));
        assertThrows(IllegalArgumentException.class, () -> new CqArm(bar, dbr, 0x1000000));
    }
}
