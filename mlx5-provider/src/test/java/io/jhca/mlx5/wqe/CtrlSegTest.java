package io.jhca.mlx5.wqe;

import static io.jhca.mlx5.wqe.GoldenC.hex;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

class CtrlSegTest {

    private final UnsafeBuffer buf = new UnsafeBuffer(new byte[64]);

    @Test
    void specGoldenBytesWithImmAsIs() {
        // specs/mlx5.md §1.2: mlx5dv_set_ctrl_seg(pi 0x1234, SEND, opmod 0, qpn 0xabcdef, fm_ce_se 0x08, ds 3, sig 0, imm 0x11223344)
        CtrlSeg.set(buf, 16, 0x1234, Mlx5Opcode.SEND, 0, 0xabcdef, FmCeSe.CQ_UPDATE, 3, 0, 0x11223344);
        String imm = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN ? "44332211" : "11223344";
        assertEquals("0012340a" + "abcdef03" + "00000008" + imm, hex(buf, 16, 16));
    }

    @Test
    void immediateForTheWireIsBigEndian() {
        CtrlSeg.set(buf, 0, 0, Mlx5Opcode.SEND_IMM, 0, 1, 0, 2, 0, CtrlSeg.beImm(0x11223344));
        assertEquals("11223344", hex(buf, 12, 4));
        assertEquals(0x11223344, CtrlSeg.immBe(buf, 0));
    }

    @Test
    void rejectsValuesTheFieldsCannotHold() {
        assertThrows(IllegalArgumentException.class, () -> CtrlSeg.set(buf, 0, 0, 0x100, 0, 1, 0, 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> CtrlSeg.set(buf, 0, 0, 0, -1, 1, 0, 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> CtrlSeg.set(buf, 0, 0, 0, 0, 0x1000000, 0, 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> CtrlSeg.set(buf, 0, 0, 0, 0, 1, 0x100, 1, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> CtrlSeg.set(buf, 0, 0, 0, 0, 1, 0, 64, 0, 0));
        assertThrows(IllegalArgumentException.class, () -> CtrlSeg.set(buf, 0, 0, 0, 0, 1, 0, 1, 256, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> CtrlSeg.set(buf, 50, 0, 0, 0, 1, 0, 1, 0, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> CtrlSeg.set(buf, -1, 0, 0, 0, 1, 0, 1, 0, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> RaddrSeg.set(buf, 49, 0, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> DataSeg.set(buf, 49, 0, 0, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> AtomicSeg.set(buf, 49, 0, 0));
        assertThrows(IndexOutOfBoundsException.class, () -> DatagramSeg.qkey(buf, 17));
    }

    @Test
    void wqebbsPerDs() {
        assertEquals(1, SendWqeLayout.wqebbs(1));
        assertEquals(1, SendWqeLayout.wqebbs(4));
        assertEquals(2, SendWqeLayout.wqebbs(5));
        assertEquals(16, SendWqeLayout.wqebbs(63));
    }

    @Test
    void fetchAddLeavesCompareZero() {
        buf.setMemory(0, 64, (byte) 0xff);
        AtomicSeg.fetchAdd(buf, 0, 5);
        assertEquals("0000000000000005" + "0000000000000000", hex(buf, 0, 16));
    }

    @Test
    void dvKeyQuirkVersusUdQkey() {
        // mlx5dv_set_dgram_seg stores key as be64: a bare 32-bit Q_Key ends up in bytes 4..7 ...
        UnsafeBuffer six = new UnsafeBuffer(new byte[6]);
        UnsafeBuffer gid = new UnsafeBuffer(new byte[16]);
        DatagramSeg.set(buf, 0, 0x11223344L, 1, 1, 0, 0, 0, six, 0, 0, 64, 0, gid, 0);
        assertEquals("0000000011223344", hex(buf, 0, 8));
        assertEquals(0, DatagramSeg.qkey(buf, 0));
        // ... while rdma-core's UD post path puts it in key.qkey.qkey, bytes 0..3
        UnsafeBuffer av = new UnsafeBuffer(new byte[48]);
        DatagramSeg.setUd(buf, 0, av, 0, 0x000102, 0x11223344);
        assertEquals("1122334400000000" + "80000102", hex(buf, 0, 12));
        assertThrows(IllegalArgumentException.class, () -> DatagramSeg.setUd(buf, 0, av, 0, 0x1000000, 0));
        assertThrows(IllegalArgumentException.class, () -> DatagramSeg.set(buf, 0, 0, 1, 2, 0, 0, 0, six, 0, 0, 0, 0, gid, 0));
    }
}
