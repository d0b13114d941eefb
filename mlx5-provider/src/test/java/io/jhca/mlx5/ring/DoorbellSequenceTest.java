package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcOpcode;

/**
 * What reaches the UAR page after a batch (rdma-core post_send_db): the doorbell record carries cur_post, the bfreg
 * half gets the first 8 bytes of the batch's last control segment, halves alternate between 0x800 and 0x900 of the
 * UAR page; a single inline WQE goes whole, by BlueFlame, into the half (its source wrapping at the ring end).
 */
class DoorbellSequenceTest {

    private static final int HALF0 = RingFixture.UAR * 4096 + 0x800;
    private static final int HALF1 = RingFixture.UAR * 4096 + 0x900;

    @Test
    void oneDoorbellPerBatchWithTheLastControlSegmentAlternatingHalves() {
        try (RingFixture f = new RingFixture(8, 8, 4, 4, 8, SqBuffer.BF_INLINE)) {
            long a = f.dma(4096).address();
            for (int batch = 0; batch < 6; batch++) {
                f.sq.startBatch();
                int last = -1;
                for (int k = 0; k < 3; k++) {
                    last = f.sq.begin(Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, k, k == 2 ? SendFlags.SIGNALED : 0, 0);
                    f.sq.raddr(a + 1024, 1);
                    f.sq.data(1, a, 8);
                    f.sq.finish();
                }
                f.sq.ringDoorbell();
                int half = batch % 2 == 0 ? HALF0 : HALF1;
                assertEquals(f.qpBuf.getLong(last, ByteOrder.BIG_ENDIAN), f.barLong(half),
                        "batch " + batch + ": ctrl seg of the last WQE at 0x" + Integer.toHexString(half));
                assertEquals(f.sq.curPost() & 0xffff, f.qpDbr.record().sendCounter());
                assertEquals(3 * (batch + 1), f.sq.head());
                f.sq.retire(f.sq.curPost() - 1);
            }
        }
    }

    @Test
    void singleInlineWqeGoesByBlueFlameWhole() {
        try (RingFixture f = new RingFixture(2, 1, 4, 4, 4, SqBuffer.BF_INLINE)) {
            byte[] p = new byte[90];
            for (int i = 0; i < p.length; i++) {
                p[i] = (byte) (0x80 | i);
            }
            // first a 1-WQEBB WQE, so the second starts in slot 1 and continues in slot 0
            f.sq.startBatch();
            f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, 1, SendFlags.SIGNALED | SendFlags.INLINE, 0);
            f.sq.inline(new UnsafeBuffer(p), 0, 4);
            f.sq.finish();
            f.sq.ringDoorbell();
            f.sq.retire(0);
            f.sq.startBatch();
            int ctrl = f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, 2, SendFlags.SIGNALED | SendFlags.INLINE, 0);
            f.sq.inline(new UnsafeBuffer(p), 0, 90);
            f.sq.finish();
            f.sq.ringDoorbell();
            assertEquals(f.sq.start() + 64, ctrl, "second WQE in slot 1");
            // the half used by this second doorbell is HALF1; 2 WQEBBs copied: slot 1, then slot 0
            for (int i = 0; i < 64; i++) {
                assertEquals(f.qpBuf.getByte(ctrl + i), f.barMemory.getByte(HALF1 + i), "byte " + i + " of slot 1");
                assertEquals(f.qpBuf.getByte(f.sq.start() + i), f.barMemory.getByte(HALF1 + 64 + i), "byte " + i + " of slot 0");
            }
        }
    }

    @Test
    void receiveDoorbellIsTheRecordAlone() {
        try (RingFixture f = new RingFixture(2, 1, 4, 4, 4, SqBuffer.BF_OFF)) {
            for (int i = 0; i < 70_000; i++) {
                f.rq.begin(i);
                f.rq.sge(1, 0x1000, 8);
                f.rq.finish();
                f.rq.ringDoorbell();
                assertEquals(i + 1 & 0xffff, f.qpDbr.record().recvCounter());
                f.rq.complete(i);
            }
            assertEquals(0L, f.barLong(HALF0));
        }
    }
}
