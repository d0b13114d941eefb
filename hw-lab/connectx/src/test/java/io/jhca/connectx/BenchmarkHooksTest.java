package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;


import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WorkCompletion;

/**
 * The hooks the mlx5 verbs benchmark stands on: with the data path paused a posted WQE is neither executed nor
 * completed, and resumes when it is resumed; cqRing is the CQ's ring as the driver sees it.
 */
class BenchmarkHooksTest {

    @Test
    void pausedDataPathDefersWorkAndCqRingIsTheDriversRing() throws Exception {
        try (SelfConnectedQp q = new SelfConnectedQp("bench0", "127.0.0.44", 16)) {
            ModelFunction fn = q.fn;
            DmaRegion mem = q.mem;
            MemoryRegion mr = q.mr;
            CompletionQueue cq = q.cq;
            QueuePair qp = q.qp;
            UnsafeBuffer ring = fn.model().cqRing(cq.cqn());
            assertEquals(256 * Cqe64.SIZE, ring.capacity(), "ncqe 64-byte CQEs");
            assertEquals(0xf0, ring.getByte(Cqe64.OP_OWN_OFFSET) & 0xff, "first CQE not written yet (INVALID, owner 0)");
            assertThrows(IllegalArgumentException.class, () -> fn.model().cqRing(cq.cqn() + 1000));

            mem.buffer().putLong(0, 0x1122334455667788L);
            fn.model().pauseDataPath(true);
            qp.sendQueue().start().wrId(7).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.address() + 4096)
                    .sge(mr, 0, 8);
            assertEquals(0, qp.sendQueue().complete());
            WorkCompletion wc = new WorkCompletion();
            long until = System.nanoTime() + 300_000_000L;
            while (System.nanoTime() < until) {
                assertEquals(0, cq.poll(wc), "no completion while the data path is paused");
                Thread.sleep(10);
            }
            assertEquals(0L, mem.buffer().getLong(4096), "nothing written while paused");

            fn.model().pauseDataPath(false);
            until = System.nanoTime() + 20_000_000_000L;
            int n = 0;
            while (n == 0 && System.nanoTime() < until) {
                n = cq.poll(wc);
            }
            assertEquals(1, n, "the WQE completes once the data path runs again");
            assertTrue(wc.isSuccess(), wc.toString());
            assertEquals(7, wc.wrId());
            assertEquals(0x1122334455667788L, mem.buffer().getLong(4096));
            assertEquals(0xf0 >>> 4, (ring.getByte(64 + Cqe64.OP_OWN_OFFSET) & 0xff) >>> 4, "the next CQE still unwritten");
        }
    }
}
