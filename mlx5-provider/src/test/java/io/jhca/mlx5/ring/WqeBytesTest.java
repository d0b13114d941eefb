package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HexFormat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.mlx5.wqe.AtomicSeg;
import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.DatagramSeg;
import io.jhca.mlx5.wqe.FmCeSe;
import io.jhca.mlx5.wqe.InlineSeg;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.mlx5.wqe.RaddrSeg;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcOpcode;

/**
 * The bytes the send ring writes for each opcode, against the same WQE composed by hand from the golden-tested
 * segment writers in rdma-core's order (qp.c {@code _mlx5_post_send}): control segment (index = cur_post, DS count,
 * fm_ce_se from the send flags, immediate big-endian), then raddr (RDMA, atomics), atomic operands (swap/add first,
 * compare second), datagram (UD), data segments (zero-length ones skipped, atomics carry 8 bytes) or one inline
 * segment padded to its last 16-byte unit.
 */
class WqeBytesTest {

    private static final long A = 0x0000_7f00_1234_5000L;
    private static final long RADDR = 0x0000_1122_3344_5560L;

    private static UnsafeBuffer expected(int bytes) {
        return new UnsafeBuffer(new byte[bytes]);
    }

    private static void assertWqe(RingFixture f, int ctrl, UnsafeBuffer expected) {
        byte[] actual = new byte[expected.capacity()];
        f.qpBuf.getBytes(ctrl, actual);
        assertEquals(HexFormat.of().formatHex(expected.byteArray()), HexFormat.of().formatHex(actual));
    }

    private static RingFixture fixture() {
        return new RingFixture(8, 4, 4, 4, 4, SqBuffer.BF_OFF);
    }

    @Test
    void sendWithTwoSgesAndAZeroLengthOne() {
        try (RingFixture f = fixture()) {
            f.sq.startBatch();
            int ctrl = f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, 1, SendFlags.SIGNALED, 0);
            f.sq.data(0x111, A, 100);
            f.sq.data(0x222, A + 4096, 0);
            f.sq.data(0x333, A + 8192, 7);
            f.sq.finish();
            UnsafeBuffer e = expected(48);
            CtrlSeg.set(e, 0, 0, Mlx5Opcode.SEND, 0, RingFixture.QPN, FmCeSe.CQ_UPDATE, 3, 0, 0);
            DataSeg.set(e, 16, 100, 0x111, A);
            DataSeg.set(e, 32, 7, 0x333, A + 8192);
            assertWqe(f, ctrl, e);
        }
    }

    @Test
    void sendImmSolicitedFenced() {
        try (RingFixture f = fixture()) {
            f.sq.startBatch();
            int ctrl = f.sq.begin(Mlx5Opcode.SEND_IMM, WcOpcode.SEND, 1,
                    SendFlags.SIGNALED | SendFlags.SOLICITED | SendFlags.FENCE, 0x11223344);
            f.sq.data(1, A, 8);
            f.sq.finish();
            UnsafeBuffer e = expected(32);
            CtrlSeg.set(e, 0, 0, Mlx5Opcode.SEND_IMM, 0, RingFixture.QPN,
                    FmCeSe.CQ_UPDATE | FmCeSe.SOLICITED | FmCeSe.FENCE, 2, 0, 0);
            e.putInt(CtrlSeg.IMM_OFFSET, 0x11223344, java.nio.ByteOrder.BIG_ENDIAN);
            DataSeg.set(e, 16, 8, 1, A);
            assertWqe(f, ctrl, e);
            assertEquals("11223344", HexFormat.of().formatHex(e.byteArray(), 12, 16), "immediate on the wire big-endian");
        }
    }

    @Test
    void rdmaWriteWriteImmAndRead() {
        int[] opcodes = {Mlx5Opcode.RDMA_WRITE, Mlx5Opcode.RDMA_WRITE_IMM, Mlx5Opcode.RDMA_READ};
        WcOpcode[] wc = {WcOpcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ};
        try (RingFixture f = fixture()) {
            f.sq.startBatch();
            for (int k = 0; k < 3; k++) {
                int imm = opcodes[k] == Mlx5Opcode.RDMA_WRITE_IMM ? 0xcafe : 0;
                int ctrl = f.sq.begin(opcodes[k], wc[k], k, 0, imm);
                f.sq.raddr(RADDR + k, 0xabc00 + k);
                f.sq.data(0x55, A + k, 64 + k);
                f.sq.finish();
                UnsafeBuffer e = expected(48);
                CtrlSeg.set(e, 0, k, opcodes[k], 0, RingFixture.QPN, 0, 3, 0, 0);
                e.putInt(CtrlSeg.IMM_OFFSET, imm, java.nio.ByteOrder.BIG_ENDIAN);
                RaddrSeg.set(e, 16, RADDR + k, 0xabc00 + k);
                DataSeg.set(e, 32, 64 + k, 0x55, A + k);
                assertWqe(f, ctrl, e);
            }
        }
    }

    @Test
    void atomicsCarrySwapAddThenCompareAndAnEightByteSge() {
        try (RingFixture f = fixture()) {
            f.sq.startBatch();
            int ctrl = f.sq.begin(Mlx5Opcode.ATOMIC_CS, WcOpcode.COMP_SWAP, 1, SendFlags.SIGNALED, 0);
            f.sq.raddr(RADDR, 0x77);
            f.sq.atomic(0x1111_2222_3333_4444L, 0x5555_6666_7777_8888L);
            f.sq.data(3, A, 8);
            f.sq.finish();
            UnsafeBuffer e = expected(64);
            CtrlSeg.set(e, 0, 0, Mlx5Opcode.ATOMIC_CS, 0, RingFixture.QPN, FmCeSe.CQ_UPDATE, 4, 0, 0);
            RaddrSeg.set(e, 16, RADDR, 0x77);
            AtomicSeg.compareSwap(e, 32, 0x5555_6666_7777_8888L, 0x1111_2222_3333_4444L);
            DataSeg.set(e, 48, AtomicSeg.ATOMIC_SIZE, 3, A);
            assertWqe(f, ctrl, e);

            ctrl = f.sq.begin(Mlx5Opcode.ATOMIC_FA, WcOpcode.FETCH_ADD, 2, 0, 0);
            f.sq.raddr(RADDR, 0x77);
            f.sq.atomic(5, 0);
            f.sq.data(3, A, 8);
            f.sq.finish();
            e = expected(64);
            CtrlSeg.set(e, 0, 1, Mlx5Opcode.ATOMIC_FA, 0, RingFixture.QPN, 0, 4, 0, 0);
            RaddrSeg.set(e, 16, RADDR, 0x77);
            AtomicSeg.fetchAdd(e, 32, 5);
            DataSeg.set(e, 48, 8, 3, A);
            assertWqe(f, ctrl, e);
        }
    }

    @Test
    void udSendCopiesTheAddressVector() {
        try (RingFixture f = fixture()) {
            UnsafeBuffer av = expected(DatagramSeg.SIZE);
            for (int i = 0; i < av.capacity(); i++) {
                av.putByte(i, (byte) (0xa0 + i));
            }
            f.sq.startBatch();
            int ctrl = f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, 9, SendFlags.SIGNALED, 0);
            f.sq.datagram(av, 0, 0x00abcd, 0x11111111);
            f.sq.data(4, A, 256);
            f.sq.finish();
            UnsafeBuffer e = expected(80);
            CtrlSeg.set(e, 0, 0, Mlx5Opcode.SEND, 0, RingFixture.QPN, FmCeSe.CQ_UPDATE, 5, 0, 0);
            DatagramSeg.setUd(e, 16, av, 0, 0x00abcd, 0x11111111);
            DataSeg.set(e, 64, 256, 4, A);
            assertWqe(f, ctrl, e);
        }
    }

    @Test
    void inlineDataInOneSegmentPaddedWithZeros() {
        try (RingFixture f = fixture()) {
            byte[] p = new byte[37];
            for (int i = 0; i < p.length; i++) {
                p[i] = (byte) (i + 1);
            }
            f.qpBuf.setMemory(f.sq.start(), 8 * 64, (byte) 0x5a);   // garbage where the WQE goes
            f.sq.startBatch();
            int ctrl = f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, 1, SendFlags.SIGNALED | SendFlags.INLINE, 0);
            f.sq.inline(new UnsafeBuffer(p), 0, 20);
            f.sq.inline(new UnsafeBuffer(p), 20, 17);   // the builder may append
            f.sq.finish();
            UnsafeBuffer e = expected(64);
            int ds = 1 + InlineSeg.ds(37);
            CtrlSeg.set(e, 0, 0, Mlx5Opcode.SEND, 0, RingFixture.QPN, FmCeSe.CQ_UPDATE, ds, 0, 0);
            InlineSeg.setHeader(e, 16, 37);
            e.putBytes(20, p);
            assertEquals(4, ds);
            assertWqe(f, ctrl, e);
        }
    }

    @Test
    void controlIndexIsTheSixteenBitProducerCounter() {
        try (RingFixture f = new RingFixture(1, 1, 1, 6, 2, SqBuffer.BF_OFF)) {
            for (int i = 0; i < 70_000; i++) {
                f.sq.startBatch();
                int ctrl = f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, i, 0, 0);
                f.sq.finish();
                f.sq.ringDoorbell();
                assertEquals(i & 0xffff, CtrlSeg.wqeIndex(f.qpBuf, ctrl));
                assertEquals(i + 1 & 0xffff, f.qpDbr.record().sendCounter());
                f.sq.retire(CtrlSeg.wqeIndex(f.qpBuf, ctrl));
            }
        }
    }
}
