package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.cq.CqeOpcode;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * {@link CqBuffer} reads each owner byte raw after one check that the ring's memory is still there: the whole ring
 * up to its last CQE is readable, a pass ends where the owner bit says, and a ring whose memory has closed throws.
 */
class CqBufferTest {

    private static final int NCQE = 4;

    @Test
    void consumesUpToTheLastCqeThenStopsAtTheOwnerBitAndThrowsOnceClosed() {
        try (DmaRegion dbrMem = DmaMemory.allocate(4096)) {
            DmaRegion region = DmaMemory.allocate(NCQE * Cqe64.SIZE);
            UnsafeBuffer ring = region.buffer();   // the view the CQ holds
            CqBuffer.initialize(ring, NCQE);
            CqBuffer cq = new CqBuffer(ring, NCQE, new DoorbellRecord().wrap(dbrMem.buffer(), 0));
            assertEquals(-1, cq.next(), "nothing written yet: op_own 0xf0");
            for (int i = 0; i < NCQE; i++) {
                ring.putByte(i * Cqe64.SIZE + Cqe64.OP_OWN_OFFSET, (byte) (CqeOpcode.REQ << 4));   // owner 0: first pass
            }
            for (int i = 0; i < NCQE; i++) {
                assertTrue(cq.hasNext());
                assertEquals(i * Cqe64.SIZE, cq.next(), "CQE " + i + ", the last one ending at the ring's last byte");
                assertEquals(CqeOpcode.REQ << 4, cq.opOwn());
            }
            assertFalse(cq.hasNext(), "slot 0 on the second pass needs owner 1");
            assertEquals(-1, cq.next());
            assertEquals(NCQE, cq.consumerIndex());
            region.close();
            IndexOutOfBoundsException e = assertThrows(IndexOutOfBoundsException.class, cq::next);
            assertTrue(e.getMessage().contains("closed"), e.getMessage());
            assertThrows(IndexOutOfBoundsException.class, cq::hasNext);
            assertEquals(NCQE, cq.consumerIndex(), "nothing consumed by the refused poll");
        }
    }
}
