package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

/**
 * Post, doorbell, execution by a device stand-in, poll: thousands of times over rings of one and two entries, so the
 * producer counters, the 16-bit indices, WQEs that continue at slot 0 and the CQ owner parity all wrap many times.
 */
class RingWrapTest {

    private static final int ITERATIONS = 5000;
    private final WorkCompletion wc = new WorkCompletion();

    @Test
    void oneEntryQueuesWrapEveryIteration() {
        try (RingFixture f = new RingFixture(1, 1, 1, 6, 2, SqBuffer.BF_OFF)) {
            DmaRegion src = f.dma(4096);
            DmaRegion dst = f.dma(4096);
            for (int i = 0; i < ITERATIONS; i++) {
                assertFalse(f.rq.full());
                f.rq.begin(1_000_000L + i);
                f.rq.sge(0x100 + 1, dst.address(), 64);
                f.rq.finish();
                f.rq.ringDoorbell();
                assertTrue(f.rq.full(), "one receive WQE outstanding fills a queue of one");

                src.buffer().putInt(0, i, ByteOrder.BIG_ENDIAN);
                src.buffer().putLong(56, ~(long) i, ByteOrder.BIG_ENDIAN);
                assertFalse(f.sq.full());
                f.sq.startBatch();
                f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, i, SendFlags.SIGNALED, 0);
                f.sq.data(0x200, src.address(), 64);
                f.sq.finish();
                f.sq.ringDoorbell();
                assertTrue(f.sq.full(), "one send WQE outstanding fills a queue of one");
                assertEquals(i + 1 & 0xffff, f.qpDbr.record().sendCounter(), "doorbell record word 1 = cur_post");

                assertEquals(1, f.engine.process());
                assertEquals(1, f.sendPoller.poll(wc));
                assertEquals(i, wc.wrId());
                assertEquals(WcStatus.SUCCESS, wc.status());
                assertEquals(WcOpcode.SEND, wc.opcode());
                assertEquals(1, f.recvPoller.poll(wc));
                assertEquals(1_000_000L + i, wc.wrId());
                assertEquals(WcOpcode.RECV, wc.opcode());
                assertEquals(64, wc.byteLen());
                assertEquals(i, dst.buffer().getInt(0, ByteOrder.BIG_ENDIAN));
                assertEquals(~(long) i, dst.buffer().getLong(56, ByteOrder.BIG_ENDIAN));
                assertEquals(0, f.sendPoller.poll(wc));
                assertEquals(0, f.recvPoller.poll(wc));
                assertFalse(f.sq.full());
                assertFalse(f.rq.full());
                assertEquals(i + 1 & 0xffffff, f.sendCq.consumerIndex() & 0xffffff);
            }
            assertFalse(f.deviceSendCq.overrun());
        }
    }

    @Test
    void twoWqebbRingWithWqesThatContinueAtSlotZero() {
        // 2 WQEBBs, one WQE outstanding: a 2-WQEBB WQE starting in slot 1 continues in slot 0
        try (RingFixture f = new RingFixture(2, 1, 2, 5, 2, SqBuffer.BF_INLINE)) {
            DmaRegion dst = f.dma(4096);
            DmaRegion src = f.dma(4096);
            byte[] payload = new byte[100];
            int wrapped = 0;
            for (int i = 0; i < ITERATIONS; i++) {
                f.rq.begin(i);
                f.rq.sge(1, dst.address(), 128);
                f.rq.finish();
                f.rq.ringDoorbell();
                int len = (i % 3 == 0) ? 8 : 60 + i % 41;   // 1-WQEBB (2 DS) or 2-WQEBB (5..7 DS) inline WQEs
                for (int k = 0; k < len; k++) {
                    payload[k] = (byte) (i * 7 + k);
                }
                int before = f.sq.curPost();
                f.sq.startBatch();
                f.sq.begin(Mlx5Opcode.SEND_IMM, WcOpcode.SEND, i, SendFlags.SIGNALED | SendFlags.INLINE, i * 31);
                f.sq.inline(new UnsafeBuffer(payload), 0, len);
                f.sq.finish();
                int bbs = f.sq.curPost() - before;
                if ((before & 1) == 1 && bbs == 2) {
                    wrapped++;
                }
                f.sq.ringDoorbell();
                assertEquals(1, f.engine.process());
                assertEquals(1, f.sendPoller.poll(wc));
                assertEquals(i, wc.wrId());
                assertEquals(WcFlags.WITH_IMM, wc.wcFlags() & WcFlags.WITH_IMM);
                assertEquals(1, f.recvPoller.poll(wc));
                assertEquals(i, wc.wrId());
                assertEquals(len, wc.byteLen());
                assertEquals(i * 31, wc.immData());
                for (int k = 0; k < len; k++) {
                    assertEquals((byte) (i * 7 + k), dst.buffer().getByte(k), "iteration " + i + " byte " + k);
                }
            }
            assertTrue(wrapped > ITERATIONS / 4, "WQEs continuing at slot 0: " + wrapped);
            src.close();
        }
    }

    @Test
    void oneCqeRetiresEveryUnsignaledWqeBeforeIt() {
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 4, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            for (int round = 0; round < 1000; round++) {
                f.sq.startBatch();
                for (int k = 0; k < 4; k++) {
                    assertFalse(f.sq.full());
                    f.sq.begin(Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, round * 4L + k, k == 3 ? SendFlags.SIGNALED : 0, 0);
                    f.sq.raddr(mem.address() + 2048, 7);
                    f.sq.data(1, mem.address(), 16);
                    f.sq.finish();
                }
                assertTrue(f.sq.full(), "4 WRs fill a queue of max_post 4");
                f.sq.ringDoorbell();
                assertEquals(4, f.engine.process());
                assertEquals(1, f.sendPoller.poll(wc), "only the signaled WQE completes");
                assertEquals(round * 4L + 3, wc.wrId());
                assertEquals(WcOpcode.RDMA_WRITE, wc.opcode());
                assertEquals(0, f.sendPoller.poll(wc));
                assertEquals(f.sq.head(), f.sq.tail(), "the CQE retired all four");
                assertFalse(f.sq.full());
            }
        }
    }

    /**
     * full() answers from a snapshot of the free room, refreshed by one tail read when it runs out: it must still say
     * full at exactly max_post outstanding, free exactly as many slots as a CQE retires, and count an aborted batch's
     * slots as free again. Every WQE signaled, so each CQE retires one.
     */
    @Test
    void fullAtExactlyMaxPostAcrossPartialRetirementAndAbort() {
        try (RingFixture f = new RingFixture(8, 6, 4, 4, 16, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            f.sq.startBatch();
            assertEquals(6, postUntilFull(f, mem), "max_post WQEs fit, not one more");
            f.sq.ringDoorbell();
            assertEquals(6, f.engine.process());
            for (int retired = 1; retired <= 6; retired++) {
                assertEquals(1, f.sendPoller.poll(wc));
                // each retired WQE frees exactly one slot: fill it, and the queue is full again
                assertFalse(f.sq.full(), "after " + retired + " retired");
                f.sq.startBatch();
                writeOne(f, mem);
                f.sq.ringDoorbell();
                assertTrue(f.sq.full(), "after " + retired + " retired and one re-posted");
            }
            assertEquals(6, f.engine.process());
            for (int i = 0; i < 6; i++) {
                assertEquals(1, f.sendPoller.poll(wc));
            }
            assertEquals(0, f.sq.outstanding());
            // an aborted batch frees what it wrote
            f.sq.startBatch();
            for (int i = 0; i < 4; i++) {
                assertFalse(f.sq.full());
                writeOne(f, mem);
            }
            f.sq.abortBatch();
            f.sq.startBatch();
            assertEquals(6, postUntilFull(f, mem), "the aborted batch's four slots are free again");
        }
    }

    private long nextWrId;

    /** One signaled RDMA WRITE of 16 bytes as a one-call WQE. */
    private void writeOne(RingFixture f, DmaRegion mem) {
        f.sq.writeOneSge(Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, nextWrId++, SendFlags.SIGNALED, 0, true,
                mem.address() + 2048, 7, 1, mem.address(), 16);
    }

    /** Writes WQEs while full() says there is room; returns how many. */
    private int postUntilFull(RingFixture f, DmaRegion mem) {
        int posted = 0;
        while (!f.sq.full()) {
            writeOne(f, mem);
            posted++;
        }
        return posted;
    }

    @Test
    void errorCompletionThenFlush() {
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 8, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            f.engine.failNext(f.deviceQp, CqeSyndrome.REMOTE_ACCESS_ERR);
            f.sq.startBatch();
            for (int k = 0; k < 3; k++) {
                f.sq.begin(Mlx5Opcode.RDMA_READ, WcOpcode.RDMA_READ, 10 + k, SendFlags.SIGNALED, 0);
                f.sq.raddr(mem.address() + 1024, 9);
                f.sq.data(1, mem.address(), 32);
                f.sq.finish();
            }
            f.sq.ringDoorbell();
            assertEquals(3, f.engine.process());
            assertEquals(1, f.sendPoller.poll(wc));
            assertEquals(10, wc.wrId());
            assertEquals(WcStatus.REM_ACCESS_ERR, wc.status());
            assertEquals(WcOpcode.RDMA_READ, wc.opcode());
            assertEquals(0x42, wc.vendorErr());
            for (int k = 1; k < 3; k++) {
                assertEquals(1, f.sendPoller.poll(wc));
                assertEquals(10 + k, wc.wrId());
                assertEquals(WcStatus.WR_FLUSH_ERR, wc.status());
            }
            assertEquals(java.util.List.of(WcStatus.REM_ACCESS_ERR), f.errors, "the QP hears of the error once");
            assertEquals(f.sq.head(), f.sq.tail());
        }
    }

    @Test
    void abortedBatchLeavesNothingBehind() {
        try (RingFixture f = new RingFixture(4, 4, 4, 4, 4, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            f.sq.startBatch();
            f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, 1, SendFlags.SIGNALED, 0);
            f.sq.data(1, mem.address(), 8);
            f.sq.finish();
            f.sq.abortBatch();
            assertEquals(0, f.sq.curPost());
            f.sq.ringDoorbell();
            assertEquals(0, f.qpDbr.record().sendCounter(), "no doorbell for an aborted batch");
            assertEquals(0, f.engine.process());
        }
    }
}
