package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;

/**
 * {@link SqBuffer#room}, which postSend's chain asks once instead of {@link SqBuffer#full()} per WR: it never
 * answers more than fits (max_send_wr outstanding) and, once completions retired WQEs, it sees them even when the
 * tail it read last is stale.
 */
@Timeout(30)
class SqRoomTest {

    private static final int MAX_POST = 4;

    @Test
    void roomIsExactAtEveryFillAndSeesRetiredWqes() {
        try (RingFixture f = new RingFixture(8, MAX_POST, 1, 6, 8, SqBuffer.BF_OFF)) {
            DmaRegion src = f.dma(4096);
            assertEquals(MAX_POST, f.sq.room(MAX_POST + 1), "an empty queue: max_send_wr, not one more");
            assertEquals(2, f.sq.room(2), "never more than asked");
            assertEquals(0, f.sq.room(0));
            for (int outstanding = 0; outstanding < MAX_POST; outstanding++) {
                assertEquals(MAX_POST - outstanding, f.sq.room(MAX_POST), outstanding + " outstanding");
                assertFalse(f.sq.full());
                post(f, src, outstanding, outstanding + 1 == MAX_POST);
            }
            assertEquals(0, f.sq.room(1), "full: no room for one");
            assertTrue(f.sq.full());
            f.sq.ringDoorbell();
            // the device runs all four, the last signaled, and the poll retires them: the tail moves past the value
            // room() and full() read, which must be read again, not trusted
            assertEquals(MAX_POST, f.engine.process());
            WorkCompletion wc = new WorkCompletion();
            assertEquals(1, f.sendPoller.poll(wc));
            assertEquals(MAX_POST - 1, wc.wrId());
            assertEquals(MAX_POST, f.sq.room(MAX_POST), "all retired: the whole queue again");
            assertEquals(MAX_POST, f.sq.room(MAX_POST + 1));
            post(f, src, 100, false);
            assertEquals(MAX_POST - 1, f.sq.room(MAX_POST), "one outstanding again");
        }
    }

    private static void post(RingFixture f, DmaRegion src, long wrId, boolean signaled) {
        f.sq.writeOneSge(Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, wrId, signaled ? SendFlags.SIGNALED : 0, 0, true,
                src.address() + 2048, 0x300, 0x200, src.address(), 64);
    }
}
