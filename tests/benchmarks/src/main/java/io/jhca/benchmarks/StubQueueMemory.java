package io.jhca.benchmarks;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.ring.Bfreg;
import io.jhca.mlx5.ring.CqBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The memory under the ring-level benchmarks ({@link Mlx5RingBenchmark}, {@link Mlx5DirectBenchmark}), as the bare C
 * loop has it: a send ring of {@link #SQ_WQEBBS} WQEBBs, a CQ ring of {@link #CQ_ENTRIES} CQEs marked not written, the
 * QP's and the CQ's doorbell records, a BAR in plain memory with a bfreg of the QP's own (no lock, as in C) and 4 KiB of
 * data; no device.
 */
final class StubQueueMemory implements AutoCloseable {
    static final int QPN = 0x11;
    static final int LKEY = 0x100;
    static final int RKEY = 0x200;
    static final int SQ_WQEBBS = 1024;
    static final int CQ_ENTRIES = 256;

    final DmaRegion sqMem = DmaMemory.allocate(SQ_WQEBBS * 64);
    final DmaRegion cqMem = DmaMemory.allocate(CQ_ENTRIES * 64);
    final DmaRegion dbrMem = DmaMemory.allocate(4096);
    final DmaRegion barMem = DmaMemory.allocate(2 * 4096);
    final DmaRegion data = DmaMemory.allocate(4096);
    final DoorbellRecord qpDbr = new DoorbellRecord().wrap(dbrMem.buffer(), 0);
    final DoorbellRecord cqDbr = new DoorbellRecord().wrap(dbrMem.buffer(), 64);
    final Bfreg bfreg = new Bfreg(new MmioWindow(barMem.buffer()), 1, 0, 512, false, false);
    final UnsafeBuffer cqBuf = cqMem.buffer();

    StubQueueMemory() {
        CqBuffer.initialize(cqBuf, CQ_ENTRIES);
    }

    CqBuffer cq() {
        return new CqBuffer(cqBuf, CQ_ENTRIES, cqDbr);
    }

    @Override
    public void close() {
        sqMem.close();
        cqMem.close();
        dbrMem.close();
        barMem.close();
        data.close();
    }
}
