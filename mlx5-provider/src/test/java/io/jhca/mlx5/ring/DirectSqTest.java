package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;

/**
 * The direct send queue and CQ ({@link DirectSq}, {@link DirectCq}) over the rings of {@link RingFixture}, executed by
 * its loopback device: the WQE bytes against the verbs ring's (whose writers the golden vectors cover), data landing,
 * the room's exact edges, the counters' 16-bit wrap, and every refusal before any store.
 */
@Timeout(30)
class DirectSqTest {

    private static final int[] OPCODES = {Mlx5Opcode.RDMA_WRITE, Mlx5Opcode.RDMA_WRITE_IMM, Mlx5Opcode.RDMA_READ,
            Mlx5Opcode.SEND, Mlx5Opcode.SEND_IMM};
    private static final WcOpcode[] WC = {WcOpcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_READ, WcOpcode.SEND,
            WcOpcode.SEND};

    /** Random WRs through both rings, doorbells and retirements in between: the same ring bytes after each one. */
    @Test
    void sameBytesAsTheVerbsRing() {
        long seed = Long.getLong("jhca.direct.seed", System.nanoTime());
        System.out.println("DirectSqTest seed " + seed + " (replay with -Djhca.direct.seed=" + seed + ")");
        Random r = new Random(seed);
        try (RingFixture verbs = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF);
             RingFixture direct = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DirectSq d = direct.sq.direct();
            int ringBytes = 16 * 64;
            int pi = d.producer();
            for (int i = 0; i < 100; i++) {   // past the ring's end six times
                String what = "WR " + i + " (seed " + seed + ")";
                int k = r.nextInt(OPCODES.length);
                int flags = r.nextInt(8) & (SendFlags.SIGNALED | SendFlags.SOLICITED | SendFlags.FENCE);
                int imm = OPCODES[k] == Mlx5Opcode.RDMA_WRITE_IMM || OPCODES[k] == Mlx5Opcode.SEND_IMM ? r.nextInt() : 0;
                boolean rdma = k < 3;
                long raddr = r.nextLong();
                int rkey = r.nextInt();
                int lkey = r.nextInt();
                long addr = r.nextLong();
                int length = 1 + r.nextInt(Integer.MAX_VALUE);
                verbs.sq.writeOneSge(OPCODES[k], WC[k], i, flags, imm, rdma, raddr, rkey, lkey, addr, length);
                int before = pi;
                switch (OPCODES[k]) {
                    case Mlx5Opcode.RDMA_WRITE: pi = d.write(pi, flags, raddr, rkey, lkey, addr, length); break;
                    case Mlx5Opcode.RDMA_WRITE_IMM: pi = d.writeImm(pi, flags, imm, raddr, rkey, lkey, addr, length); break;
                    case Mlx5Opcode.RDMA_READ: pi = d.read(pi, flags, raddr, rkey, lkey, addr, length); break;
                    case Mlx5Opcode.SEND: pi = d.send(pi, flags, lkey, addr, length); break;
                    default: pi = d.sendImm(pi, flags, imm, lkey, addr, length); break;
                }
                assertEquals(before + 1, pi, what);
                assertArrayEquals(bytes(verbs.qpBuf, ringStart(verbs), ringBytes), bytes(direct.qpBuf, ringStart(direct),
                        ringBytes), what);
                if (r.nextInt(3) == 0 || d.room() == pi - d.producer()) {
                    verbs.sq.ringDoorbell();
                    d.doorbell(pi);
                    assertEquals(verbs.qpDbr.record().sendCounter(), direct.qpDbr.record().sendCounter(), what);
                    verbs.sq.retire(pi - 1);
                    d.retire((pi - 1) & 0xffff);
                    assertEquals(0, d.outstanding(), what);
                }
            }
        }
    }

    /** RDMA WRITEs the loopback device executes: every byte lands, one CQE names the signaled WQE and retires all. */
    @Test
    void writesLandAndTheirCqeRetiresThem() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DmaRegion src = f.dma(4096);
            DmaRegion dst = f.dma(4096);
            for (int i = 0; i < 4096; i++) {
                src.buffer().putByte(i, (byte) (i * 7 + 3));
            }
            DirectSq sq = f.sq.direct();
            DirectCq cq = new DirectCq(f.sendCq, n -> n == RingFixture.QPN ? f : null);
            int pi = sq.producer();
            for (int b = 0; b < 8; b++) {
                pi = sq.write(pi, b == 7 ? SendFlags.SIGNALED : 0, dst.address() + b * 512, 0x77, 0x66,
                        src.address() + b * 512, 512);
            }
            assertEquals(0, f.engine.process(), "nothing published before the doorbell");
            sq.doorbell(pi);
            assertEquals(8, f.qpDbr.record().sendCounter());
            long ctrl = Long.reverseBytes(f.qpBuf.getLong(ringStart(f) + 7 * 64));
            assertEquals(ctrl, f.barLong(doorbellOffset()), "the BAR got the last WQE's control word");
            assertEquals(8, f.engine.process());
            assertArrayEquals(bytes(src.buffer(), 0, 4096), bytes(dst.buffer(), 0, 4096));
            assertTrue(cq.poll());
            assertEquals(CqeOpcode.REQ, cq.opcode());
            assertEquals(RingFixture.QPN, cq.qpn());
            assertEquals(7, cq.wqeCounter());
            assertEquals(Mlx5Opcode.RDMA_WRITE, cq.sendOpcode());
            assertEquals(WcStatus.SUCCESS, cq.status());
            assertFalse(cq.poll(), "one CQE for the batch");
            assertEquals(1, f.sendCq.record().consumerIndex(), "the consumer index went to the record");
            assertEquals(8, sq.outstanding());
            sq.retire(cq.wqeCounter());
            assertEquals(0, sq.outstanding());
            assertEquals(16, sq.room());
        }
    }

    /** The room's edge: a ring of 16 takes exactly 16 WQEs, refuses the 17th, and takes more as CQEs retire them. */
    @Test
    void aRingFilledToExactlyItsSizeRefusesTheNext() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DmaRegion mem = f.dma(4096);
            DirectSq sq = f.sq.direct();
            int pi = sq.producer();
            for (int i = 0; i < 16; i++) {
                pi = sq.write(pi, SendFlags.SIGNALED, mem.address() + 2048, 1, 2, mem.address(), 8);
            }
            assertEquals(0, sq.room() - (pi - sq.producer()));
            byte[] ring = bytes(f.qpBuf, ringStart(f), 16 * 64);
            int full = pi;
            VerbsException e = assertThrows(VerbsException.class,
                    () -> sq.write(full, 0, mem.address(), 1, 2, mem.address(), 8));
            assertEquals(VerbsException.ENOMEM, e.errno());
            assertArrayEquals(ring, bytes(f.qpBuf, ringStart(f), 16 * 64), "the refused WQE stored nothing");
            sq.doorbell(pi);
            assertEquals(16, sq.outstanding());
            assertEquals(0, sq.room());
            assertThrows(VerbsException.class, () -> sq.write(full, 0, mem.address(), 1, 2, mem.address(), 8));
            assertEquals(16, f.engine.process());
            DirectCq cq = new DirectCq(f.sendCq, n -> f);
            assertTrue(cq.poll());
            sq.retire(cq.wqeCounter());   // WQE 0 done: exactly one slot back
            assertEquals(1, sq.room());
            pi = sq.write(pi, 0, mem.address() + 2048, 1, 2, mem.address(), 8);
            int next = pi;
            assertThrows(VerbsException.class, () -> sq.write(next, 0, mem.address(), 1, 2, mem.address(), 8));
        }
    }

    /** A counter before the last doorbell, a doorbell outside what was written, a length the device would misread. */
    @Test
    void refusalsComeBeforeAnyStore() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DirectSq sq = f.sq.direct();
            int pi = sq.write(sq.producer(), 0, 0x1000, 1, 2, 0x2000, 8);
            pi = sq.write(pi, 0, 0x1000, 1, 2, 0x2000, 8);
            sq.doorbell(pi);
            byte[] ring = bytes(f.qpBuf, ringStart(f), 16 * 64);
            int published = pi;
            assertThrows(IllegalArgumentException.class, () -> sq.write(published - 1, 0, 0x1000, 1, 2, 0x2000, 8),
                    "a WQE the device may be reading");
            assertThrows(IllegalArgumentException.class, () -> sq.write(published, 0, 0x1000, 1, 2, 0x2000, 0),
                    "byte_count 0 is 2 GiB to the device");
            assertThrows(IllegalArgumentException.class, () -> sq.write(published, 0, 0x1000, 1, 2, 0x2000, -1));
            assertArrayEquals(ring, bytes(f.qpBuf, ringStart(f), 16 * 64));
            assertThrows(IllegalArgumentException.class, () -> sq.doorbell(published - 1));
            assertThrows(IllegalArgumentException.class, () -> sq.doorbell(published + 1), "WQE " + published
                    + " was not written");
            assertThrows(IllegalArgumentException.class, () -> sq.doorbell(published + 15), "past the room");
            sq.doorbell(published);   // nothing new: nothing to do
            assertEquals(2, f.qpDbr.record().sendCounter());
        }
    }

    /** A CQE counter of no outstanding WQE (stale, forged, another queue's) changes nothing. */
    @Test
    void retireRefusesCountersOfNoOutstandingWqe() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DirectSq sq = f.sq.direct();
            int pi = sq.producer();
            for (int i = 0; i < 3; i++) {
                pi = sq.write(pi, 0, 0x1000, 1, 2, 0x2000, 8);
            }
            assertThrows(IllegalArgumentException.class, () -> sq.retire(0), "written, not published");
            sq.doorbell(pi);
            assertThrows(IllegalArgumentException.class, () -> sq.retire(3), "one past the last");
            assertThrows(IllegalArgumentException.class, () -> sq.retire(0xffff), "one before the first");
            assertEquals(3, sq.outstanding());
            sq.retire(1);
            assertEquals(1, sq.outstanding());
            assertThrows(IllegalArgumentException.class, () -> sq.retire(1), "retired already");
            sq.retire(2);
            assertEquals(0, sq.outstanding());
        }
    }

    /** The counter passes 0xffff: WQE indexes, the doorbell record and retirement wrap with it. */
    @Test
    void theCounterWrapsPast0xffff() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            Bfreg bfreg = new Bfreg(f.bar, RingFixture.UAR, 512, false);
            DirectSq sq = new DirectSq(f.qpBuf, ringStart(f), 16, RingFixture.QPN, false, f.qpDbr.record(), bfreg,
                    0xfffe);
            int pi = sq.producer();
            for (int i = 0; i < 4; i++) {
                pi = sq.write(pi, 0, 0x1000, 1, 2, 0x2000, 8);
            }
            assertEquals(0x10002, pi);
            for (int c = 0xfffe; c < 0x10002; c++) {
                int slot = ringStart(f) + (c & 15) * 64;
                assertEquals(c & 0xffff, f.qpBuf.getShort(slot + 1, java.nio.ByteOrder.BIG_ENDIAN) & 0xffff,
                        "index of WQE " + c);
            }
            sq.doorbell(pi);
            assertEquals(2, f.qpDbr.record().sendCounter());
            sq.retire(0xffff);
            assertEquals(2, sq.outstanding());
            sq.retire(1);
            assertEquals(0, sq.outstanding());
        }
    }

    /** A queue the provider invalidated (QP reset, destroyed, device dead) refuses every call with its reason. */
    @Test
    void anInvalidatedQueueRefusesEverything() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DirectSq sq = f.sq.direct();
            int pi = sq.write(sq.producer(), 0, 0x1000, 1, 2, 0x2000, 8);
            sq.invalidate("QP reset");
            int next = pi;
            assertEquals("QP reset", assertThrows(IllegalStateException.class,
                    () -> sq.write(next, 0, 0x1000, 1, 2, 0x2000, 8)).getMessage());
            assertEquals("QP reset", assertThrows(IllegalStateException.class, () -> sq.doorbell(next)).getMessage());
            assertEquals("QP reset", assertThrows(IllegalStateException.class, () -> sq.retire(0)).getMessage());
            assertEquals(0, f.qpDbr.record().sendCounter(), "nothing published");
        }
    }

    /** The ring's memory closed: the doorbell refuses; a WQE written meanwhile lands in pages the ring gave up. */
    @Test
    void closedMemoryRefusesTheDoorbell() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DirectSq sq = f.sq.direct();
            int pi = sq.write(sq.producer(), 0, 0x1000, 1, 2, 0x2000, 8);
            f.regions.stream().filter(r -> r.address() == f.qpBuf.addressOffset()).findFirst().orElseThrow().close();
            int next = sq.write(pi, 0, 0x1000, 1, 2, 0x2000, 8);
            assertThrows(IllegalStateException.class, () -> sq.doorbell(next));
        }
    }

    /** An error CQE: its syndrome, the QP told, and the WQE it names retired. */
    @Test
    void anErrorCqeCarriesItsSyndromeAndTellsTheQp() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            DirectSq sq = f.sq.direct();
            DirectCq cq = new DirectCq(f.sendCq, n -> n == RingFixture.QPN ? f : null);
            f.engine.failNext(f.deviceQp, CqeSyndrome.REMOTE_ACCESS_ERR);
            int pi = sq.write(sq.producer(), 0, 0x1000, 1, 2, 0x2000, 8);
            sq.doorbell(pi);
            f.engine.process();
            assertTrue(cq.poll());
            assertEquals(CqeOpcode.REQ_ERR, cq.opcode());
            assertEquals(CqeSyndrome.REMOTE_ACCESS_ERR, cq.syndrome());
            assertEquals(WcStatus.REM_ACCESS_ERR, cq.status());
            assertEquals(0, cq.wqeCounter());
            assertEquals(java.util.List.of(WcStatus.REM_ACCESS_ERR), f.errors);
            sq.retire(cq.wqeCounter());
            assertEquals(0, sq.outstanding());
        }
    }

    private static int ringStart(RingFixture f) {
        return 16 << 6;   // the fixture's RQ (16 WQEs of 64 bytes) comes first
    }

    /** The BAR offset of the fixture's bfreg 0 first half: UAR page 1, + 0x800. */
    private static int doorbellOffset() {
        return RingFixture.UAR * 4096 + 0x800;
    }

    private static byte[] bytes(UnsafeBuffer b, int offset, int length) {
        byte[] out = new byte[length];
        b.getBytes(offset, out);
        return out;
    }
}
