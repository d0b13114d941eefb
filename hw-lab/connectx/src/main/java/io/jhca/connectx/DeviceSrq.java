package io.jhca.connectx;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cmd.SrqLayouts;
import io.jhca.verbs.SharedReceiveQueue;

/**
 * A shared receive queue as the device keeps it: its ring (pages from CREATE_SRQ's PAS) of {@code 1 << log_srq_size}
 * WQEs of {@code 1 << strideShift} bytes, each an {@code mlx5_wqe_srq_next_seg} and data segments; its doorbell
 * record (be32 at +0, low 16 bits: the driver's post counter); and the rxe SRQ that mirrors it, which the attached
 * QPs' mirrors take from.
 *
 * <p>The device walks the free list as rdma-core's srq.c builds it: it starts at WQE 0, and having fetched WQE
 * {@link #hwHead} goes on to the one its next_wqe_index names (read when the WQE is fetched: a WQE's link is
 * rewritten only while the driver holds it as the list's tail, never while it is posted). Each fetched WQE goes to
 * the rxe SRQ with wr_id = its index, which comes back as the CQE's wqe_counter.
 */
final class DeviceSrq {

    final int srqn;
    final DevicePd pd;
    final PagedBuffer buffer;
    final int wqeCnt;
    final int strideShift;
    final long dbrHost;
    private final UnsafeBuffer dbrView;
    final SharedReceiveQueue rxeSrq;
    /** The resource name the rxe SRQ's async events carry. */
    final String rxeName;
    /** Copy of the SRQ context as created, returned by QUERY_SRQ (lwm filled in from the armed limit). */
    final UnsafeBuffer srqc = new UnsafeBuffer(new byte[SrqLayouts.SRQC.sizeBytes()]);

    /** The next WQE to fetch (the free list's order), and how many were fetched (16 bits, like the record). */
    int hwHead;
    int hwCount;
    /** QPs attached (CREATE_QP with rq_type SRQ naming it). */
    int users;

    DeviceSrq(int srqn, DevicePd pd, PagedBuffer buffer, int wqeCnt, int strideShift, long dbrHost,
            SharedReceiveQueue rxeSrq) {
        this.srqn = srqn;
        this.pd = pd;
        this.buffer = buffer;
        this.wqeCnt = wqeCnt;
        this.strideShift = strideShift;
        this.dbrHost = dbrHost;
        this.dbrView = new UnsafeBuffer(dbrHost, 8);
        this.rxeSrq = rxeSrq;
        this.rxeName = rxeSrq.describe();
    }

    /** The driver's post counter from the doorbell record (be32 at +0, low 16 bits). */
    int dbrCounter() {
        return DeviceCq.be32(dbrView.getIntVolatile(0)) & 0xffff;
    }

    long slotOffset(int index) {
        return (long) (index & (wqeCnt - 1)) << strideShift;
    }
}
