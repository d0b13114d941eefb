package io.jhca.connectx;

import java.lang.invoke.VarHandle;
import java.lang.management.ManagementFactory;
import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * The verbs benchmark's operation, for the allocation tests: on a self-connected RC QP of the model with its data
 * path paused, a batch of {@value #BATCH} RDMA WRITEs through the builder or one postSend chain, the doorbell, the
 * CQE of the last one written as the device would, one poll; each kind's bytes counted by the calling thread's own
 * allocation counter around it.
 */
final class DataPathRounds implements AutoCloseable {
    static final int BATCH = 8;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private final SelfConnectedQp q;
    private final UnsafeBuffer ring;
    private final int entries;
    private final SendWr[] chain = new SendWr[BATCH];
    private final WorkCompletion wc = new WorkCompletion();
    private int pi;
    private int wqeCounter;

    DataPathRounds(String name, String address) throws Exception {
        q = new SelfConnectedQp(name, address, 256);
        q.fn.model().pauseDataPath(true);
        ring = q.fn.model().cqRing(q.cq.cqn());
        entries = ring.capacity() / Cqe64.SIZE;
        MemoryRegion mr = q.mr;
        for (int b = BATCH - 1; b >= 0; b--) {
            chain[b] = new SendWr(1).opcode(WrOpcode.RDMA_WRITE).rdma(mr.address() + 4096, mr.rkey())
                    .sge(mr, 0, 64).sendFlags(b + 1 == BATCH ? SendFlags.SIGNALED : 0);
            if (b + 1 < BATCH) {
                chain[b].next(chain[b + 1]);
            }
        }
    }

    /** {@code n} operations of each kind; adds the bytes this thread allocated in them to bytes[0] and bytes[1]. */
    void run(int n, long[] bytes) {
        long self = Thread.currentThread().getId();
        SendQueue sq = q.qp.sendQueue();
        MemoryRegion mr = q.mr;
        long remote = mr.address() + 4096;
        for (int i = 0; i < n; i++) {
            long before = THREADS.getThreadAllocatedBytes(self);
            sq.start();
            for (int b = 0; b < BATCH; b++) {
                sq.wrId(i).flags(b + 1 == BATCH ? SendFlags.SIGNALED : 0).rdmaWrite(mr.rkey(), remote).sge(mr, 0, 64);
            }
            check(sq.complete() == 0, "builder batch refused");
            completeLast();
            check(q.cq.poll(wc) == 1 && wc.status() == WcStatus.SUCCESS, "builder batch: no good completion");
            bytes[0] += THREADS.getThreadAllocatedBytes(self) - before;

            before = THREADS.getThreadAllocatedBytes(self);
            postChain(i);
            bytes[1] += THREADS.getThreadAllocatedBytes(self) - before;
        }
    }

    /** One postSend chain of {@value #BATCH} WRs with wr_id {@code i}, its last CQE, its poll. */
    void postChain(int i) {
        for (int b = 0; b < BATCH; b++) {
            chain[b].wrId(i);
        }
        check(q.qp.postSend(chain[0]) == BATCH, "postSend chain refused");
        completeLast();
        check(q.cq.poll(wc) == 1 && wc.wrId() == i, "postSend chain: no completion of its last WR");
    }

    /** The device's part, as the benchmark plays it: the CQE of the last WQE, body first, then op_own. */
    private void completeLast() {
        wqeCounter += BATCH;   // one WQEBB per RDMA WRITE with one SGE
        int offset = (pi & (entries - 1)) * Cqe64.SIZE;
        ring.putShort(offset + Cqe64.WQE_COUNTER_OFFSET, (short) (wqeCounter - 1), ByteOrder.BIG_ENDIAN);
        ring.putInt(offset + Cqe64.SOP_DROP_QPN_OFFSET, Mlx5Opcode.RDMA_WRITE << 24 | q.qp.qpn(), ByteOrder.BIG_ENDIAN);
        ring.putInt(offset + Cqe64.BYTE_CNT_OFFSET, 64, ByteOrder.BIG_ENDIAN);
        int owner = (pi & entries) != 0 ? 1 : 0;
        VarHandle.storeStoreFence();
        ring.putByte(offset + Cqe64.OP_OWN_OFFSET, (byte) (CqeOpcode.REQ << 4 | owner));
        pi++;
    }

    private static void check(boolean ok, String what) {
        if (!ok) {
            throw new IllegalStateException(what);
        }
    }

    @Override
    public void close() {
        q.close();
    }
}
