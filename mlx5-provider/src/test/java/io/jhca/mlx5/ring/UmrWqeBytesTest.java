package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.HexFormat;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.FmCeSe;
import io.jhca.mlx5.wqe.KlmSeg;
import io.jhca.mlx5.wqe.MkeyContextSeg;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.mlx5.wqe.UmrCtrlSeg;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcOpcode;

/**
 * The whole WQEs of memory window operations, against the same WQE composed from the golden-tested segment writers
 * in rdma-core's order (qp.c {@code set_bind_wr}): a bind is ctrl (UMR, the window's rkey in imm) + UMR control +
 * mkey context + KLM, 12 DS; a LOCAL_INV or unbind 8 DS; the WQE after either carries the small initiator fence
 * (qp.c {@code next_fence}) unless it asks for FENCE; SEND_INVAL carries the rkey in imm.
 */
class UmrWqeBytesTest {

    private static final long A = 0x0000_7f00_1234_5000L;

    private static void assertWqe(RingFixture f, int ctrl, UnsafeBuffer expected) {
        byte[] actual = new byte[expected.capacity()];
        f.qpBuf.getBytes(ctrl, actual);
        assertEquals(HexFormat.of().formatHex(expected.byteArray()), HexFormat.of().formatHex(actual));
    }

    @Test
    void bindThenLocalInvalidateThenAFencedSend() {
        try (RingFixture f = new RingFixture(16, 8, 4, 4, 8, SqBuffer.BF_OFF)) {
            f.sq.startBatch();
            int bind = f.sq.begin(Mlx5Opcode.UMR, WcOpcode.BIND_MW, 1, SendFlags.SIGNALED, 0);
            f.sq.immediate(0x00abcd07);
            int access = MkeyContextSeg.accessFlagsOf(2 | 4);
            f.sq.umr(true, 0x00abcd08, access, A + 64, 8192, 0x4242);
            f.sq.finish();
            UnsafeBuffer e = new UnsafeBuffer(new byte[192]);
            CtrlSeg.set(e, 0, 0, Mlx5Opcode.UMR, 0, RingFixture.QPN, FmCeSe.CQ_UPDATE, 12, 0,
                    CtrlSeg.beImm(0x00abcd07));   // htobe32(mw->rkey)
            UmrCtrlSeg.set(e, 16, true, 8192);
            MkeyContextSeg.set(e, 64, true, 0x08, RingFixture.QPN, access, A + 64, 8192);
            KlmSeg.set(e, 128, 8192, 0x4242, A + 64);
            assertWqe(f, bind, e);
            assertEquals("00abcd07", HexFormat.of().formatHex(e.byteArray(), 12, 16), "the window's rkey big-endian");
            assertEquals(RingFixture.QPN << 8 | 0x08, MkeyContextSeg.qpnMkey(e, 64), "type 2: the QPN above the key");

            int inv = f.sq.begin(Mlx5Opcode.UMR, WcOpcode.LOCAL_INV, 2, 0, 0x00abcd08);
            f.sq.umr(true, 0, 0, 0, 0, 0);
            f.sq.finish();
            UnsafeBuffer i = new UnsafeBuffer(new byte[128]);
            CtrlSeg.set(i, 0, 3, Mlx5Opcode.UMR, 0, RingFixture.QPN, FmCeSe.FENCE_INITIATOR_SMALL, 8, 0,
                    CtrlSeg.beImm(0x00abcd08));
            UmrCtrlSeg.set(i, 16, true, 0);
            MkeyContextSeg.set(i, 64, true, 0, RingFixture.QPN, 0, 0, 0);
            assertWqe(f, inv, i);
            assertEquals(0xffffff00, MkeyContextSeg.qpnMkey(i, 64), "an invalidation names no QP");

            int send = f.sq.begin(Mlx5Opcode.SEND_INVAL, WcOpcode.SEND, 3, SendFlags.SIGNALED, 0x00abcd08);
            f.sq.data(7, A, 16);
            f.sq.finish();
            UnsafeBuffer s = new UnsafeBuffer(new byte[32]);
            CtrlSeg.set(s, 0, 5, Mlx5Opcode.SEND_INVAL, 0, RingFixture.QPN,
                    FmCeSe.CQ_UPDATE | FmCeSe.FENCE_INITIATOR_SMALL, 2, 0, CtrlSeg.beImm(0x00abcd08));
            DataSeg.set(s, 16, 16, 7, A);
            assertWqe(f, send, s);

            int next = f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, 4, 0, 0);
            f.sq.data(7, A, 16);
            f.sq.finish();
            UnsafeBuffer n = new UnsafeBuffer(new byte[32]);
            CtrlSeg.set(n, 0, 6, Mlx5Opcode.SEND, 0, RingFixture.QPN, 0, 2, 0, 0);
            DataSeg.set(n, 16, 16, 7, A);
            assertWqe(f, next, n);
            f.sq.abortBatch();
        }
    }

    @Test
    void anAbortedBindTakesItsFenceBackAndAType1BindNamesNoQp() {
        try (RingFixture f = new RingFixture(16, 8, 4, 4, 8, SqBuffer.BF_OFF)) {
            f.sq.startBatch();
            f.sq.begin(Mlx5Opcode.UMR, WcOpcode.BIND_MW, 1, 0, 0);
            f.sq.umr(false, 0x11, 0, A, 64, 0x4242);
            f.sq.finish();
            f.sq.abortBatch();
            f.sq.startBatch();
            int ctrl = f.sq.begin(Mlx5Opcode.UMR, WcOpcode.BIND_MW, 1, 0, 0x500);
            f.sq.umr(false, 0x501, 0, A, 64, 0x4242);
            f.sq.finish();
            assertEquals(0, CtrlSeg.fmCeSe(f.qpBuf, ctrl) & FmCeSe.FENCE_MASK, "no fence left over from the aborted bind");
            assertEquals(0xffffff01, MkeyContextSeg.qpnMkey(f.qpBuf, ctrl + 64), "type 1: no QP above the key");
            assertEquals(0, UmrCtrlSeg.flags(f.qpBuf, ctrl + 16) & UmrCtrlSeg.FLAG_CHECK_FREE, "type 1: no free check");
            f.sq.abortBatch();
        }
    }
}
