package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcStatus;

/** {@link DirectCq} over {@link RingFixture}'s CQs, fed by its loopback device. */
@Timeout(30)
class DirectCqTest {

    /** A CQ of 16 entries filled to exactly 16, twice over (the owner bit flips each lap), then empty. */
    @Test
    void aCqFilledToExactlyItsSizeGivesEveryCqeOnceAcrossTheOwnerFlip() {
        try (RingFixture f = new RingFixture(64, 64, 16, 6, 16, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            DirectSq sq = f.sq.direct();
            DirectCq cq = new DirectCq(f.sendCq, n -> f);
            int pi = sq.producer();
            for (int lap = 0; lap < 3; lap++) {
                for (int i = 0; i < 16; i++) {
                    pi = sq.write(pi, SendFlags.SIGNALED, mem.address() + 2048, 1, 2, mem.address(), 16);
                }
                sq.doorbell(pi);
                assertEquals(16, f.engine.process());
                assertFalse(f.deviceSendCq.overrun(), "16 CQEs fit a CQ of 16 (lap " + lap + ")");
                for (int i = 0; i < 16; i++) {
                    assertTrue(cq.poll(), "CQE " + i + " of lap " + lap);
                    assertEquals((lap * 16 + i) & 0xffff, cq.wqeCounter(), "lap " + lap);
                    sq.retire(cq.wqeCounter());
                }
                assertFalse(cq.poll(), "empty after exactly 16 (lap " + lap + ")");
                assertEquals((lap + 1) * 16, cq.consumerIndex());
                assertEquals((lap + 1) * 16, f.sendCq.record().consumerIndex());
            }
        }
    }

    /** A receive CQE completes the receive queue's WQE: its wr_id, the byte count and the immediate. */
    @Test
    void aReceiveCqeCompletesTheReceiveQueuesWqe() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            f.rq.postOne(0xabcdefL, 3, mem.address() + 1024, 256);
            f.rq.ringDoorbell();
            DirectSq sq = f.sq.direct();
            DirectCq send = new DirectCq(f.sendCq, n -> n == RingFixture.QPN ? f : null);
            DirectCq recv = new DirectCq(f.recvCq, n -> n == RingFixture.QPN ? f : null);
            int pi = sq.writeImm(sq.producer(), SendFlags.SIGNALED, 0x12345678, mem.address() + 2048, 1, 2,
                    mem.address(), 100);
            sq.doorbell(pi);
            f.engine.process();
            assertTrue(recv.poll());
            assertEquals(CqeOpcode.RESP_WR_IMM, recv.opcode());
            assertEquals(0xabcdefL, recv.recvWrId());
            assertEquals(100, recv.byteCount());
            assertEquals(0x12345678, recv.immediate());
            assertEquals(WcStatus.SUCCESS, recv.status());
            assertEquals(0, f.rq.outstanding(), "the receive WQE was completed");
            assertTrue(send.poll());
            assertEquals(CqeOpcode.REQ, send.opcode());
            assertEquals(0, send.recvWrId());
        }
    }

    /** SENDs into the receive queue: their receive CQEs (wr_id, bytes, immediate or none) and requester CQEs. */
    @Test
    void sendsCompleteTheReceiveQueuesWqes() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            for (int i = 0; i < 100; i++) {
                mem.buffer().putByte(i, (byte) (i + 1));
            }
            f.rq.postOne(77, 3, mem.address() + 1024, 256);
            f.rq.ringDoorbell();
            DirectSq sq = f.sq.direct();
            DirectCq recv = new DirectCq(f.recvCq, n -> n == RingFixture.QPN ? f : null);
            DirectCq send = new DirectCq(f.sendCq, n -> n == RingFixture.QPN ? f : null);
            int pi = sq.sendImm(sq.producer(), SendFlags.SIGNALED, 0x0a0b0c0d, 2, mem.address(), 100);
            sq.doorbell(pi);
            f.engine.process();
            assertTrue(recv.poll());
            assertEquals(CqeOpcode.RESP_SEND_IMM, recv.opcode());
            assertEquals(77, recv.recvWrId());
            assertEquals(100, recv.byteCount());
            assertEquals(0x0a0b0c0d, recv.immediate());
            for (int i = 0; i < 100; i++) {
                assertEquals((byte) (i + 1), mem.buffer().getByte(1024 + i), "byte " + i);
            }
            assertTrue(send.poll());
            assertEquals(CqeOpcode.REQ, send.opcode());
            assertEquals(1, sq.outstanding());
            f.rq.postOne(78, 3, mem.address() + 2048, 256);
            f.rq.ringDoorbell();
            sq.retire(send.wqeCounter());
            pi = sq.send(pi, SendFlags.SIGNALED, 2, mem.address(), 8);
            sq.doorbell(pi);
            f.engine.process();
            assertTrue(recv.poll());
            assertEquals(78, recv.recvWrId());
            assertEquals(0, recv.immediate(), "a SEND without immediate");
            assertTrue(send.poll());
            assertEquals(0, send.recvWrId());
            assertEquals(0, send.immediate());
            assertEquals(0, send.syndrome());
        }
    }

    /** Invalidated (CQ destroyed, in error, device dead): every poll throws with the reason, empty or not. */
    @Test
    void anInvalidatedCqRefusesToPoll() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DirectCq cq = new DirectCq(f.sendCq, n -> f);
            assertFalse(cq.poll());
            cq.invalidate("CQ destroyed");
            assertEquals("CQ destroyed", assertThrows(IllegalStateException.class, cq::poll).getMessage());
        }
    }

    /** A clean (QP reset or destroyed) drops that QP's CQEs with the poller's index, which follows the clean. */
    @Test
    void aCleanGoesThroughThePollersIndex() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            DirectSq sq = f.sq.direct();
            DirectCq cq = new DirectCq(f.sendCq, n -> f);
            int pi = sq.producer();
            for (int i = 0; i < 4; i++) {
                pi = sq.write(pi, SendFlags.SIGNALED, mem.address() + 2048, 1, 2, mem.address(), 16);
            }
            sq.doorbell(pi);
            f.engine.process();
            assertTrue(cq.poll());
            assertEquals(3, cq.clean(RingFixture.QPN, null), "the three CQEs not polled");
            assertEquals(4, cq.consumerIndex());
            assertFalse(cq.poll());
        }
    }
}
