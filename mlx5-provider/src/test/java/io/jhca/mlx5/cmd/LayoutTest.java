package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** The layout DSL on its own: bit placement against a naive reference, cross-dword fields, and refusals. */
class LayoutTest {

    /** Reference: the structure as a big-endian bit string, bit i = bit (7 - i % 8) of byte i / 8. */
    private static boolean bit(byte[] b, int i) {
        return ((b[i >>> 3] >>> (7 - (i & 7))) & 1) != 0;
    }

    private static long referenceGet(byte[] b, int off, int width) {
        long v = 0;
        for (int i = 0; i < width; i++) {
            v = (v << 1) | (bit(b, off + i) ? 1 : 0);
        }
        return v;
    }

    @Test
    void anyOffsetAndWidthMatchesTheBitStringReference() {
        Random r = new Random(7);
        for (int iter = 0; iter < 20_000; iter++) {
            int width = 1 + r.nextInt(64);
            int off = r.nextInt(200);
            byte[] bytes = new byte[40];
            r.nextBytes(bytes);
            byte[] before = bytes.clone();
            UnsafeBuffer b = new UnsafeBuffer(bytes);
            long v = r.nextLong() & Field.mask(width);
            Field.writeBits(b, 0, off, width, v);
            assertEquals(v, referenceGet(bytes, off, width), "written value at " + off + "/" + width);
            assertEquals(v, Field.readBits(b, 0, off, width), "read back at " + off + "/" + width);
            for (int i = 0; i < bytes.length * 8; i++) {
                if ((i < off || i >= off + width) && bit(before, i) != bit(bytes, i)) {
                    fail("bit " + i + " changed by a write of " + width + " bits at " + off);
                }
            }
        }
    }

    @Test
    void sixtyFourBitFieldIsTwoBigEndianDwords() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[0x40]);
        CqLayouts.CQC.set(b, 0, "dbr_addr", 0x0102030405060708L);
        byte[] expected = {1, 2, 3, 4, 5, 6, 7, 8};
        byte[] actual = new byte[8];
        b.getBytes(0x38, actual);
        assertArrayEquals(expected, actual);
        assertEquals(0x0102030405060708L, CqLayouts.CQC.get(b, 0, "dbr_addr"));
    }

    @Test
    void rmacAliasSpansTwoDwords() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[QpLayouts.ADS.sizeBytes()]);
        QpLayouts.ADS.set(b, 0, "rmac", 0x0a1b2c3d4e5fL);
        assertEquals(0x0a1bL, QpLayouts.ADS.get(b, 0, "rmac_47_32"));
        assertEquals(0x2c3d4e5fL, QpLayouts.ADS.get(b, 0, "rmac_31_0"));
        // rmac_47_32 is bits 15:0 of the dword at 0x24, rmac_31_0 the dword at 0x28: MAC bytes in wire order
        byte[] mac = new byte[6];
        b.getBytes(0x26, mac);
        assertArrayEquals(new byte[] {0x0a, 0x1b, 0x2c, 0x3d, 0x4e, 0x5f}, mac);
        assertEquals(0x0a1b2c3d4e5fL, QpLayouts.ADS.get(b, 0, "rmac"));
    }

    @Test
    void setKeepsNeighbours() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[0x40]);
        b.setMemory(0, 0x40, (byte) 0xff);
        CqLayouts.CQC.set(b, 0, "log_cq_size", 0);
        // log_cq_size is bits 28:24 of the dword at 0x0c
        assertEquals(0xe0ffffff, b.getInt(0x0c, java.nio.ByteOrder.BIG_ENDIAN));
        CqLayouts.CQC.set(b, 0, "log_cq_size", 0x15);
        assertEquals(0xf5ffffff, b.getInt(0x0c, java.nio.ByteOrder.BIG_ENDIAN));
    }

    @Test
    void valuesMustFit() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[0x40]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> CqLayouts.CQC.set(b, 0, "log_cq_size", 32));
        assertTrue(e.getMessage().contains("log_cq_size (5 bits)"), e.getMessage());
        // -1 fits as two's complement: all ones
        CqLayouts.CQC.set(b, 0, "uar_page", -1);
        assertEquals(0xffffffL, CqLayouts.CQC.get(b, 0, "uar_page"));
        assertThrows(IllegalArgumentException.class, () -> CqLayouts.CQC.set(b, 0, "uar_page", -0x1000001L));
        // a signed 32-bit field (QUERY_PAGES num_pages) round-trips negative values through getInt
        UnsafeBuffer out = new UnsafeBuffer(new byte[16]);
        HcaLayouts.QUERY_PAGES_OUT.set(out, 0, "num_pages", -12);
        assertEquals(-12, HcaLayouts.QUERY_PAGES_OUT.field("num_pages").getInt(out, 0));
    }

    @Test
    void unknownFieldIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> QpLayouts.CREATE_QP_IN.field("qpc.no_such"));
        assertEquals("create_qp_in has no field 'qpc.no_such'", e.getMessage());
    }

    @Test
    void builderRefusesOverlapsAndOverruns() {
        IllegalArgumentException overlap = assertThrows(IllegalArgumentException.class,
                () -> Layout.struct("x", 8).field("a", 0, 8).field("b", 4, 8).build());
        assertEquals("x: a overlaps b", overlap.getMessage());
        assertThrows(IllegalArgumentException.class, () -> Layout.struct("x", 8).field("a", 60, 8).build());
        assertThrows(IllegalArgumentException.class, () -> Layout.struct("x", 8).field("a", 0, 65));
        assertThrows(IllegalArgumentException.class, () -> Layout.struct("x", 8).field("a", 0, 1).field("a", 8, 1));
        assertThrows(IllegalArgumentException.class, () -> Layout.struct("x", 6));
    }

    @Test
    void accessOutsideTheBufferThrowsInsteadOfCorrupting() {
        UnsafeBuffer small = new UnsafeBuffer(new byte[16]);
        assertThrows(IndexOutOfBoundsException.class, () -> CqLayouts.CQC.set(small, 0, "dbr_addr", 1));
        UnsafeBuffer b = new UnsafeBuffer(new byte[CqLayouts.CREATE_CQ_IN.sizeBytes(2)]);
        Struct s = new Struct().wrap(CqLayouts.CREATE_CQ_IN, b, 0, b.capacity());
        s.setElement("pas", 1, 0x1000);
        assertThrows(IndexOutOfBoundsException.class, () -> s.setElement("pas", 2, 0x2000));
        assertThrows(IndexOutOfBoundsException.class, () -> s.setElement("pas", -1, 0x2000));
        assertThrows(IndexOutOfBoundsException.class,
                () -> EqLayouts.CREATE_EQ_IN.field("event_bitmask").setElement(b, 0, 4, 1));
    }

    @Test
    void flexibleArraySizes() {
        assertEquals(0x110 + 8 * 300, QpLayouts.CREATE_QP_IN.sizeBytes(300));
        assertEquals(16 + 8 * 1000, HcaLayouts.MANAGE_PAGES_IN.sizeBytes(1000));
        assertEquals(0x110, MkeyLayouts.CREATE_MKEY_IN.flexibleArray().byteOffset());
        assertThrows(IllegalStateException.class, () -> CqLayouts.CQC.sizeBytes(1));
    }

    @Test
    void mttHelpers() {
        assertEquals(0x110 + 4 * 8, MkeyLayouts.createMkeyInLength(3), "padded to an even number of entries");
        assertEquals(0x110 + 4 * 8, MkeyLayouts.createMkeyInLength(4));
        assertEquals(2, MkeyLayouts.octwords(3));
        assertEquals(0x1234_5000L | 3, MkeyLayouts.mttEntry(0x1234_5000L, MkeyLayouts.MTT_PERM_RW));
        assertThrows(IllegalArgumentException.class, () -> MkeyLayouts.mttEntry(0x1234_5800L, 3));
    }

    @Test
    void structBuildsACommandLikeThePrm() {
        UnsafeBuffer b = new UnsafeBuffer(new byte[CqLayouts.CREATE_CQ_IN.sizeBytes(1)]);
        new Struct().wrap(CqLayouts.CREATE_CQ_IN, b, 0, b.capacity()).clear()
                .set("opcode", CmdOpcode.CREATE_CQ)
                .set("cq_context.log_cq_size", 10)
                .set("cq_context.uar_page", 0x123)
                .set("cq_context.dbr_addr", 0x7000)
                .setElement("pas", 0, 0x9000);
        assertEquals(0x04000000, b.getInt(0x00, java.nio.ByteOrder.BIG_ENDIAN));
        assertEquals(0x0a000123, b.getInt(0x1c, java.nio.ByteOrder.BIG_ENDIAN));
        assertEquals(0x7000L, b.getLong(0x48, java.nio.ByteOrder.BIG_ENDIAN));
        assertEquals(0x9000L, b.getLong(0x110, java.nio.ByteOrder.BIG_ENDIAN));
    }
}
