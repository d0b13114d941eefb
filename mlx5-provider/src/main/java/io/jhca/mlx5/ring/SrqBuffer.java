package io.jhca.mlx5.ring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.doorbell.Fences;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.RecvWqeLayout;
import io.jhca.mlx5.wqe.SrqNextSeg;

/**
 * A shared receive queue's ring, as rdma-core's mlx5 srq.c keeps it: {@code wqeCnt} (a power of two) WQEs of
 * {@code 1 << wqeShift} bytes, each a {@link SrqNextSeg} and data segments ended, when not full, by the
 * {@code MLX5_INVALID_LKEY} terminator. The WQEs to post into form a list through next_wqe_index from {@code head} to
 * {@code tail}; posting fills the head and follows its link, and the device, having used a WQE, goes on to the one it
 * names. The tail is never posted into, so {@code wqeCnt - 1} WRs fit. Posting is published by the doorbell record
 * alone (word 0 := the 16-bit post counter, after the WQE stores).
 *
 * <p>A completed WQE is only marked free (a bit per WQE, rdma-core's {@code free_wqe_bitmap}); the list takes it back
 * when a post finds it empty ({@code head == tail}): the WQE after the tail if it is free, else the nearest run of
 * free WQEs, relinked in index order (srq.c {@code set_next_tail}, {@code set_next_contig_wqes}, after rdma-core's
 * "mlx5: Enhance SRQ performance", 2023). So a completion writes nothing into the ring, and WQEs are posted in index
 * order even when completions come back out of order (from several QPs), which the device reads faster than a list
 * in completion order. rdma-core's wait queue for WQEs that took an ODP page fault has no counterpart here: jhca
 * registers no ODP memory.
 *
 * <p>Posting and completing both change the list or the bits; they may come from different threads (a poster and a
 * CQ poller), so both hold the ring's lock, a spinlock as rdma-core's SRQ lock is ({@code mlx5_spin_lock} with
 * need_lock: one atomic to take it, a plain store to release it): {@link #complete} takes it itself; a poster takes it
 * with {@link #lock()} around its chain and the doorbell, and calls the posting methods ({@link #full}, {@link #postOne},
 * {@link #begin}, {@link #sge}, {@link #finish}, {@link #ringDoorbell}) only while it holds it. A Java monitor here cost
 * two atomics per lock and an attempted atomic per nested call. The lock is not reentrant, and nothing under it waits
 * for anything: it is held for a chain's WQE stores or for one bit.
 */
public final class SrqBuffer implements ReceiveRing {

    private final UnsafeBuffer buf;
    private final int wqeCnt;
    private final int wqeShift;
    private final int maxGs;
    private final DoorbellRecord dbr;
    private final long[] wrid;
    /** Bit i: WQE i is the driver's and in no list (completed, not yet linked back). */
    private final long[] free;

    /** The lock: 0 free, 1 held. */
    @SuppressWarnings("unused")   // through LOCK
    private volatile int locked;
    private static final VarHandle LOCK;

    static {
        try {
            LOCK = MethodHandles.lookup().findVarHandle(SrqBuffer.class, "locked", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private int head;
    private int tail;
    private int counter;
    private int nreq;
    private int wqe = -1;
    private int used;
    private int posted;

    /**
     * @param buf      the SRQ buffer, at least {@code wqeCnt << wqeShift} bytes
     * @param wqeCnt   WQEs, a power of two of at least 2
     * @param wqeShift log2 of the WQE stride: room for the next segment and at least one data segment
     * @param dbr      the SRQ's doorbell record (word 0 is the post counter)
     */
    public SrqBuffer(UnsafeBuffer buf, int wqeCnt, int wqeShift, DoorbellRecord dbr) {
        if (wqeCnt < 2 || Integer.bitCount(wqeCnt) != 1 || wqeShift < 5 || ((long) wqeCnt << wqeShift) > buf.capacity()) {
            throw new IllegalArgumentException("SRQ ring of " + wqeCnt + " x " + (1 << wqeShift)
                    + " bytes does not fit a buffer of " + buf.capacity());
        }
        this.buf = buf;
        this.wqeCnt = wqeCnt;
        this.wqeShift = wqeShift;
        this.maxGs = ((1 << wqeShift) - SrqNextSeg.SIZE) / DataSeg.SIZE;
        this.dbr = dbr;
        this.wrid = new long[wqeCnt];
        this.free = new long[(wqeCnt + 63) / 64];
        for (int i = 0; i < wqeCnt; i++) {
            SrqNextSeg.set(buf, i << wqeShift, (i + 1) & (wqeCnt - 1));
        }
        this.head = 0;
        this.tail = wqeCnt - 1;
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

    /** WRs that fit at once: all WQEs but the tail. */
    public int maxPost() {
        return wqeCnt - 1;
    }

    /** WRs posted and not completed. */
    public int posted() {
        lock();
        try {
            return posted;
        } finally {
            unlock();
        }
    }

    /** Takes the ring's lock, for a chain of posts and its doorbell; spins, then yields, while another thread holds it. */
    public void lock() {
        if (!LOCK.compareAndSet(this, 0, 1)) {
            lockContended();
        }
    }

    private void lockContended() {
        for (int spins = 0; ; spins++) {
            if ((int) LOCK.getVolatile(this) == 0 && LOCK.compareAndSet(this, 0, 1)) {
                return;
            }
            if (spins < 64) {
                Thread.onSpinWait();
            } else {
                Thread.yield();   // the holder may be descheduled: give it the CPU
            }
        }
    }

    /** Releases the ring's lock (a release store, as rdma-core's unlock is a plain store on x86). */
    public void unlock() {
        LOCK.setRelease(this, 0);
    }

    private boolean held() {
        return (int) LOCK.getVolatile(this) != 0;
    }

    /**
     * Whether no WQE can take a WR: the list is used up ({@code head == tail}) and no completed WQE is free to link
     * behind the tail. Links what is free first, as rdma-core's post does when it finds {@code head == tail}.
     */
    @Override
    public boolean full() {
        assert held() : "SRQ ring used without its lock";
        return head == tail && !grow();
    }

    /** Links free WQEs behind the tail: the next one in index order, else the nearest run; false if none is free. */
    private boolean grow() {
        int next = (tail + 1) & (wqeCnt - 1);
        if (isFree(next)) {
            link(tail, next);
            return true;
        }
        int at = firstRun(head + 1, wqeCnt);
        if (at < 0) {
            at = firstRun(0, head);
            if (at < 0) {
                return false;
            }
        }
        int end = at;
        while (end + 1 < wqeCnt && end + 1 != head && isFree(end + 1)) {
            end++;
        }
        link(tail, at);
        for (int i = at; i < end; i++) {
            link(i, i + 1);
        }
        return true;
    }

    /** The first free WQE in [from, to), or -1. */
    private int firstRun(int from, int to) {
        for (int i = from; i < to; i++) {
            if (isFree(i)) {
                return i;
            }
        }
        return -1;
    }

    /** WQE {@code to} joins the list after {@code from}, the tail, and becomes the tail. */
    private void link(int from, int to) {
        SrqNextSeg.setNext(buf, from << wqeShift, to);
        tail = to;
        free[to >>> 6] &= ~(1L << to);
    }

    private boolean isFree(int index) {
        return (free[index >>> 6] & 1L << index) != 0;
    }

    /**
     * The whole WQE of a receive of one SGE at the head ({@link RecvWqeLayout#putOne} after the next segment), and the
     * head moves along the free list; the caller has checked {@link #full()}.
     */
    @Override
    public void postOne(long wrId, int lkey, long addr, int length) {
        assert held() : "SRQ ring used without its lock";
        int h = head;
        int at = h << wqeShift;
        RecvWqeLayout.putOne(buf, at + SrqNextSeg.SIZE, length, lkey, addr, maxGs);
        wrid[h] = wrId;
        head = SrqNextSeg.next(buf, at);
        nreq++;
        posted++;
    }

    /** Opens the WQE at the head for {@code wrId}; the caller has checked {@link #full()}. */
    @Override
    public void begin(long wrId) {
        assert held() : "SRQ ring used without its lock";
        wqe = head << wqeShift;
        used = 0;
        wrid[head] = wrId;
    }

    /** A scatter entry; zero-length entries are skipped, as for a QP's receive queue. */
    @Override
    public void sge(int lkey, long addr, int length) {
        if (length == 0) {
            return;
        }
        if (used == maxGs) {
            throw new IllegalStateException("SRQ WQE holds " + maxGs + " scatter entries");
        }
        RecvWqeLayout.setSge(buf, wqe + SrqNextSeg.SIZE, used++, length, lkey, addr);
    }

    /** Ends the WQE (terminator if not full) and moves the head along the free list. */
    @Override
    public void finish() {
        RecvWqeLayout.finish(buf, wqe + SrqNextSeg.SIZE, used, maxGs);
        head = SrqNextSeg.next(buf, wqe);
        nreq++;
        posted++;
        wqe = -1;
    }

    /** Publishes the WQEs posted since the last call: WQE stores, then record word 0 := counter (16 bits). */
    public void ringDoorbell() {
        assert held() : "SRQ ring used without its lock";
        if (nreq == 0) {
            return;
        }
        counter = (counter + nreq) & 0xffff;
        nreq = 0;
        Fences.wqeBeforeDoorbellRecord();
        dbr.setRecvCounter(counter);
    }

    // ---- completion side ----

    /**
     * The device completed WQE {@code wqeCounter} (the CQE's wqe_counter): returns its wr_id and marks the WQE free
     * (rdma-core mlx5_free_srq_wqe); a post links it back when the list runs out.
     */
    public long complete(int wqeCounter) {
        int ind = wqeCounter & (wqeCnt - 1);
        lock();
        free[ind >>> 6] |= 1L << ind;
        posted--;
        long id = wrid[ind];
        unlock();
        return id;
    }
}
