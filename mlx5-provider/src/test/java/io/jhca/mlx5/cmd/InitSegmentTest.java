package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.doorbell.MmioWindow;

/** Init segment registers over a memory-backed BAR0: byte order, sub-fields, write order. */
class InitSegmentTest {

    private final UnsafeBuffer mem = new UnsafeBuffer(ByteBuffer.allocateDirect(InitSegment.SIZE));
    private final InitSegment iseg = new InitSegment(new MmioWindow(mem));

    @Test
    void registersAreBigEndianInMemory() {
        iseg.ringCmdDoorbell(1 << 3);
        assertEquals(0x00, mem.getByte(0x18));
        assertEquals(0x08, mem.getByte(0x1b), "doorbell value stored big-endian");
        mem.putInt(InitSegment.FW_REV, 0x00230010, ByteOrder.BIG_ENDIAN);
        mem.putInt(InitSegment.CMDIF_REV_FW_SUB, (5 << 16) | 2000, ByteOrder.BIG_ENDIAN);
        assertEquals(16, iseg.fwRevMajor());
        assertEquals(35, iseg.fwRevMinor());
        assertEquals(2000, iseg.fwRevSubminor());
        assertEquals(5, iseg.cmdifRev());
        assertEquals("16.35.2000", iseg.fwVersion());
    }

    @Test
    void queueGeometryAndAddress() {
        mem.putInt(InitSegment.CMDQ_ADDR_L_SZ, 0x0000_0156, ByteOrder.BIG_ENDIAN);
        assertEquals(5, iseg.logCmdqSize());
        assertEquals(6, iseg.logCmdqStride());
        assertEquals(1, iseg.nicInterface());

        List<String> writes = new ArrayList<>();
        MmioWindow recording = new MmioWindow(new UnsafeBuffer(ByteBuffer.allocateDirect(InitSegment.SIZE))) {
            @Override
            protected void store32(int offset, int deviceOrder) {
                int value = ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? deviceOrder : Integer.reverseBytes(deviceOrder);
                writes.add(String.format("%03x=%08x", offset, value));
            }
        };
        new InitSegment(recording).cmdqAddress(0x0000_0012_3456_7000L);
        assertEquals(List.of("010=00000012", "014=34567000"), writes, "high dword first, low (with size bits 0) last");
        assertThrows(IllegalArgumentException.class, () -> iseg.cmdqAddress(0x1234_5800L));

        iseg.cmdqAddress(0x0000_0001_0000_2000L);
        assertEquals(0x0000_0001_0000_2000L, iseg.cmdqAddress());
        iseg.nicInterface(InitSegment.NIC_IFC_DISABLED);
        assertEquals(0x0000_2100, mem.getInt(InitSegment.CMDQ_ADDR_L_SZ, ByteOrder.BIG_ENDIAN));
    }

    @Test
    void healthAndInitializing() throws InterruptedException {
        // byte 0x23c irisc_index, 0x23d synd, 0x23e..0x23f ext_synd (be16)
        mem.putByte(0x23c, (byte) 2);
        mem.putByte(0x23d, (byte) 7);
        mem.putShort(0x23e, (short) 0x1234, ByteOrder.BIG_ENDIAN);
        assertEquals(2, iseg.healthIriscIndex());
        assertEquals(7, iseg.healthSyndrome());
        assertEquals(0x1234, iseg.healthExtSyndrome());
        assertEquals("irisc not responding", InitSegment.describeHealthSyndrome(iseg.healthSyndrome()));
        mem.putInt(InitSegment.HEALTH_COUNTER, 0xff00_0042, ByteOrder.BIG_ENDIAN);
        assertEquals(0x42, iseg.healthCounter(), "24-bit counter");

        mem.putInt(InitSegment.INITIALIZING, 0x8000_0000, ByteOrder.BIG_ENDIAN);
        assertTrue(iseg.initializing());
        assertFalse(iseg.awaitInitialized(20));
        mem.putInt(InitSegment.INITIALIZING, 0x4000_0000, ByteOrder.BIG_ENDIAN);
        assertFalse(iseg.initializing(), "bit 30 (fw reset supported) is not bit 31");
        assertTrue(iseg.awaitInitialized(20));

        mem.putInt(InitSegment.INTERNAL_TIMER_H, 0x1, ByteOrder.BIG_ENDIAN);
        mem.putInt(InitSegment.INTERNAL_TIMER_L, 0x8000_0000, ByteOrder.BIG_ENDIAN);
        assertEquals(0x1_8000_0000L, iseg.internalTimer());
    }

}
