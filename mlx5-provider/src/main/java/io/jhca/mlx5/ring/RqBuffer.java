package io.jhca.mlx5.ring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.doorbell.Fences;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.RecvWqeLayout;

/**
 * A receive queue: {@code wqeCnt} (a power of two) WQEs of {@code 1 << wqeShift} bytes at the start of the QP buffer,
 * each an array of data segments ended, when not full, by the {@code MLX5_INVALID_LKEY} (0x100) terminator (rdma-core
 * qp.c {@code mlx5_post_recv}). Posting is published by the doorbell record alone (word 0 := head & 0xffff, after the
 * WQE stores); there is no MMIO doorbell for receives. Responder CQEs retire WQEs in order ({@code ++rq.tail}).
 */
public final class RqBuffer implements ReceiveRing {

    private static final VarHandle TAIL;

    static {
        try {
            TAIL = MethodHandles.lookup().findVarHandle(RqBuffer.class, "tail", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final UnsafeBuffer buf;
    private final int start;
    private final int wqeCnt;
    private final int wqeShift;
    private final int maxGs;
    private final DoorbellRecord dbr;
    private final long[] wrid;

    /** WQEs written, published or not (rdma-core's {@code head + nreq}). */
    private int posted;
    /** WQEs made visible to the device (what the doorbell record carries). */
    private int head;
    /**
     * The tail as {@link #full()} last read it: the tail only grows, so the ring is read again (an acquire) only when
     * it looks full by this value, not once per WR.
     */
    private int tailSeen;
    @SuppressWarnings("unused") // through TAIL
    private volatile int tail;
    private int wqe = -1;
    private int used;

    /**
     * @param buf      the QP buffer
     * @param start    offset of the RQ in it (0 in rdma-core's layout)
     * @param wqeCnt   WQEs, a power of two
     * @param wqeShift log2 of the WQE stride, at least 4 (one data segment)
     * @param dbr      the QP's doorbell record (word 0 is the RQ counter)
     */
    public RqBuffer(UnsafeBuffer buf, int start, int wqeCnt, int wqeShift, DoorbellRecord dbr) {
        if (wqeCnt <= 0 || Integer.bitCount(wqeCnt) != 1 || wqeShift < 4
                || (long) start + ((long) wqeCnt << wqeShift) > buf.capacity()) {
            throw new IllegalArgumentException("receive ring of " + wqeCnt + " x " + (1 << wqeShift) + " bytes at " + start
                    + " does not fit a buffer of " + buf.capacity());
        }
        this.buf = buf;
        this.start = start;
        this.wqeCnt = wqeCnt;
        this.wqeShift = wqeShift;
        this.maxGs = (1 << wqeShift) / DataSeg.SIZE;
        this.dbr = dbr;
        this.wrid = new long[wqeCnt];
    }

    public int wqeCnt() {
        return wqeCnt;
    }

    public int wqeShift() {
        return wqeShift;
    }

    /** Scatter entries per WQE. */
    public int maxGs() {
        return maxGs;
    }

    /** WQEs that may be outstanding: all of them (rdma-core rq.max_post). */
    public int maxPost() {
        return wqeCnt;
    }

    public int head() {
        return head;
    }

    public int tail() {
        return (int) TAIL.getAcquire(this);
    }

    @Override
    public boolean full() {
        if (posted - tailSeen < wqeCnt) {
            return false;
        }
        tailSeen = (int) TAIL.getAcquire(this);
        return posted - tailSeen >= wqeCnt;
    }

    /**
     * The whole WQE of a receive of one SGE ({@link RecvWqeLayout#putOne}), with nothing kept between calls; the
     * caller has checked {@link #full()}.
     */
    @Override
    public void postOne(long wrId, int lkey, long addr, int length) {
        int post = posted;
        RecvWqeLayout.putOne(buf, start + ((post & (wqeCnt - 1)) << wqeShift), length, lkey, addr, maxGs);
        wrid[post & (wrid.length - 1)] = wrId;
        posted = post + 1;
    }

    /** Opens the next WQE; the caller has checked {@link #full()}. */
    @Override
    public void begin(long wrId) {
        int idx = posted & (wqeCnt - 1);
        wqe = start + (idx << wqeShift);
        used = 0;
        wrid[idx] = wrId;
    }

    /** A scatter entry; zero-length entries are skipped (mlx5_post_recv). */
    @Override
    public void sge(int lkey, long addr, int length) {
        if (length == 0) {
            return;
        }
        if (used == maxGs) {
            throw new IllegalStateException("receive WQE holds " + maxGs + " scatter entries");
        }
        RecvWqeLayout.setSge(buf, wqe, used++, length, lkey, addr);
    }

    /** Writes the terminator if the WQE is not full. */
    @Override
    public void finish() {
        RecvWqeLayout.finish(buf, wqe, used, maxGs);
        posted++;
        wqe = -1;
    }

    /** Publishes the WQEs posted since the last call: WQE stores, then record word 0 := head & 0xffff. */
    public void ringDoorbell() {
        if (posted == head) {
            return;
        }
        head = posted;
        Fences.wqeBeforeDoorbellRecord();
        dbr.setRecvCounter(head);
    }

    // ---- completion side ----

    /**
     * Retires the oldest WQE; returns the wr_id of the WQE at {@code wqeCounter}. The wr_id is read before the tail
     * moves: once it has moved, a thread posting to a full ring may reuse the slot and overwrite it.
     */
    public long complete(int wqeCounter) {
        long id = wrid[wqeCounter & (wrid.length - 1)];
        TAIL.setRelease(this, (int) TAIL.getAcquire(this) + 1);
        return id;
    }

    /** WQEs given to the device and not completed. */
    public int outstanding() {
        return head - (int) TAIL.getAcquire(this);
    }

    /** Retires the oldest outstanding WQE without a CQE (a software flush) and returns its wr_id. */
    public long flushOldest() {
        int t = (int) TAIL.getAcquire(this);
        long id = wrid[t & (wqeCnt - 1)];
        TAIL.setRelease(this, t + 1);
        return id;
    }

    /** Back to empty (QP moved to RESET). */
    public void reset() {
        posted = 0;
        head = 0;
        tailSeen = 0;
        TAIL.setRelease(this, 0);
        wqe = -1;
    }
}
