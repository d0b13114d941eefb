package io.jhca.mlx5.ring;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.testdev.LoopbackEngine;
import io.jhca.verbs.WcStatus;

/**
 * Rings of one QP (RQ at 0, SQ after it in one buffer, one doorbell record), a send and a receive CQ, a fake BAR with
 * UAR page 1, all in plain memory, wired to a {@link LoopbackEngine} as QP {@link #QPN} connected to itself.
 */
final class RingFixture implements AutoCloseable, CqeOwner {

    static final int QPN = 0x1234;
    static final int UAR = 1;

    final List<DmaRegion> regions = new ArrayList<>();
    final UnsafeBuffer barMemory;
    final MmioWindow bar;
    final DbrPool dbrs;
    final DbrPool.Slot qpDbr;
    final UnsafeBuffer qpBuf;
    final SqBuffer sq;
    final RqBuffer rq;
    final CqBuffer sendCq;
    final CqBuffer recvCq;
    final CqPoller sendPoller;
    final CqPoller recvPoller;
    final LoopbackEngine engine = new LoopbackEngine(this::reachable);
    final LoopbackEngine.Qp deviceQp;
    final LoopbackEngine.Cq deviceSendCq;
    final LoopbackEngine.Cq deviceRecvCq;
    final List<WcStatus> errors = new ArrayList<>();
    boolean ud;

    RingFixture(int sqWqebbs, int sqMaxPost, int rqWqes, int rqShift, int ncqe, int bfMode) {
        ByteBuffer b = ByteBuffer.allocateDirect(64 * 4096 + 4096);
        UnsafeBuffer raw = new UnsafeBuffer(b);
        int pad = (int) (-raw.addressOffset() & 4095);
        barMemory = new UnsafeBuffer(b, pad, 64 * 4096);
        bar = new MmioWindow(barMemory);
        dbrs = new DbrPool(this::dma);
        qpDbr = dbrs.allocate();
        int rqBytes = rqWqes << rqShift;
        int bytes = Math.max(4096, rqBytes + sqWqebbs * 64);
        DmaRegion q = dma(bytes);
        qpBuf = q.buffer(0, bytes);
        Bfreg bfreg = new Bfreg(bar, UAR, 512, true);
        sq = new SqBuffer(qpBuf, rqBytes, sqWqebbs, sqMaxPost, QPN, false, qpDbr.record(), bfreg, bfMode);
        rq = new RqBuffer(qpBuf, 0, rqWqes, rqShift, qpDbr.record());
        DbrPool.Slot sDbr = dbrs.allocate();
        DbrPool.Slot rDbr = dbrs.allocate();
        DmaRegion sMem = dma(Math.max(4096, ncqe * 64));
        DmaRegion rMem = dma(Math.max(4096, ncqe * 64));
        CqBuffer.initialize(sMem.buffer(), ncqe);
        CqBuffer.initialize(rMem.buffer(), ncqe);
        sendCq = new CqBuffer(sMem.buffer(), ncqe, sDbr.record());
        recvCq = new CqBuffer(rMem.buffer(), ncqe, rDbr.record());
        sendPoller = new CqPoller(sendCq, n -> n == QPN ? this : null);
        recvPoller = new CqPoller(recvCq, n -> n == QPN ? this : null);
        deviceSendCq = engine.cq(1, sMem.address(), ncqe, sDbr.iova());
        deviceRecvCq = engine.cq(2, rMem.address(), ncqe, rDbr.iova());
        deviceQp = engine.qp(QPN, false, q.address(), bytes, rqWqes, rqShift, rqBytes, sqWqebbs, qpDbr.iova(),
                deviceSendCq, deviceRecvCq);
        engine.connect(deviceQp, deviceQp);
    }

    DmaRegion dma(long bytes) {
        DmaRegion r = DmaMemory.allocate(DmaOptions.of(bytes).lock(false));
        regions.add(r);
        return r;
    }

    /** The device may touch what this fixture allocated, nothing else. */
    private boolean reachable(long address, long length) {
        for (DmaRegion r : regions) {
            if (!r.isClosed() && address >= r.address() && address - r.address() <= r.length() - length) {
                return true;
            }
        }
        return false;
    }

    /** The 8 bytes at BAR0 offset {@code offset}, big-endian. */
    long barLong(int offset) {
        return bar.getLongBe(offset);
    }

    @Override
    public int qpn() {
        return QPN;
    }

    @Override
    public SqBuffer sendRing() {
        return sq;
    }

    @Override
    public RqBuffer recvRing() {
        return rq;
    }

    @Override
    public boolean isUd() {
        return ud;
    }

    @Override
    public void onErrorCompletion(boolean requester, WcStatus status) {
        errors.add(status);
    }

    @Override
    public void close() {
        dbrs.close();
        for (DmaRegion r : regions) {
            if (!r.isClosed()) {
                r.close();
            }
        }
    }
}
