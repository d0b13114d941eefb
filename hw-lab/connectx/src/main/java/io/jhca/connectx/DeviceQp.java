package io.jhca.connectx;

import java.nio.ByteBuffer;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.wqe.SendWqeLayout;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;

/**
 * A queue pair as the device keeps it. Its WQ buffer (pages from CREATE_QP's PAS) holds the RQ at offset 0 and the SQ
 * right after it (rdma-core verbs.c, kernel mlx5_ib qp.c: {@code sq.offset = rq.wqe_cnt << rq.wqe_shift}); its doorbell
 * record holds the RQ producer counter at +0 and the SQ producer counter (in WQEBBs) at +4, each a big-endian 32-bit
 * word of which 16 bits count (rdma-core {@code MLX5_RCV_DBR} / {@code MLX5_SND_DBR}).
 *
 * <p>The device side counters {@link #sqHw} and {@link #rqHw} say how far the device has consumed; everything between
 * them and the doorbell record is posted and not yet fetched. Each fetched send WQE is posted to the mirror rxe QP
 * with wr_id = its 16-bit index, and its opcode and completion request are kept per WQEBB slot so the rxe completion
 * can be turned into the CQE the driver expects.
 */
final class DeviceQp {

    final int qpn;
    final QpType type;
    final DevicePd pd;
    final DeviceCq sendCq;
    final DeviceCq recvCq;
    final int uar;
    final int userIndex;
    final PagedBuffer buffer;
    /** RQ entries (0 with a zero-length RQ) and log2 of the RQ stride in bytes. */
    final int rqCount;
    final int rqStrideShift;
    /** SQ size in WQEBBs (0 with no_sq) and the SQ's offset in the buffer. */
    final int sqCount;
    final long sqOffset;
    final long dbrHost;
    private final UnsafeBuffer dbrView;
    final QueuePair rxeQp;
    /** Copy of the QP context as created and modified, returned by QUERY_QP. */
    final UnsafeBuffer qpc = new UnsafeBuffer(new byte[QpLayouts.QPC.sizeBytes()]);

    /** mlx5 qpc state (QpLayouts.STATE_*). */
    int state = QpLayouts.STATE_RST;
    /** UD: the QP's Q_Key (RST2INIT), used when a WQE's Q_Key has its high bit set. */
    int qkey;
    /** Longest message: 2^log_msg_max (INIT2RTR; the device limit until then). */
    int logMsgMax = ModelCaps.LOG_MAX_MSG;
    int sqHw;
    int rqHw;
    /** Send WQEs posted to rxe and not yet completed by it (every one is signaled there). */
    int sqOutstanding;
    int rqOutstanding;
    final byte[] sqOpcode;
    final boolean[] sqSignaled;

    /** A send WQE the device answers itself (malformed, or NOP) once everything before it completed. */
    boolean pending;
    boolean pendingError;
    int pendingIndex;
    int pendingOpcode;
    int pendingWqebbs;
    int pendingSyndrome;
    int pendingVendor;
    boolean pendingSignaled;

    /** Inline data is copied here and sent as a gather entry under a key only the model knows. */
    final ByteBuffer bounceMemory;
    final long bounceHost;
    MemoryRegion bounceMr;
    int bounceKey;

    /** UD address handles of the rxe side, by destination (a few; created on first use). */
    final AddressHandle[] ahs = new AddressHandle[8];
    final long[] ahKeyHi = new long[8];
    final long[] ahKeyLo = new long[8];
    final int[] ahKeyGrh = new int[8];
    int ahCount;

    /** The Q counter set it is counted in (qpc.counter_set_id at RST2INIT), or null. */
    QCounterSet counterSet;

    /** The SRQ its receives come from (rq_type SRQ), else null. */
    DeviceSrq srq;

    /** Stopped because its memory was unmapped under it. */
    boolean faulted;

    DeviceQp(int qpn, QpType type, DevicePd pd, DeviceCq sendCq, DeviceCq recvCq, int uar, int userIndex, PagedBuffer buffer,
            int rqCount, int rqStrideShift, int sqCount, long dbrHost, QueuePair rxeQp) {
        this.qpn = qpn;
        this.type = type;
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.uar = uar;
        this.userIndex = userIndex;
        this.buffer = buffer;
        this.rqCount = rqCount;
        this.rqStrideShift = rqStrideShift;
        this.sqCount = sqCount;
        this.sqOffset = (long) rqCount << rqStrideShift;
        this.dbrHost = dbrHost;
        this.dbrView = new UnsafeBuffer(dbrHost, 8);
        this.rxeQp = rxeQp;
        this.sqOpcode = new byte[Math.max(1, sqCount)];
        this.sqSignaled = new boolean[Math.max(1, sqCount)];
        // one WQE of up to 16 WQEBBs may start at the last slot: room for its inline data past the ring end
        int bounceBytes = sqCount == 0 ? 0 : sqCount * SendWqeLayout.WQEBB + SendWqeLayout.MAX_WQEBBS * SendWqeLayout.WQEBB;
        this.bounceMemory = bounceBytes == 0 ? null : ByteBuffer.allocateDirect(bounceBytes);
        this.bounceHost = bounceBytes == 0 ? 0 : new UnsafeBuffer(bounceMemory).addressOffset();
    }

    /** RQ producer counter from the doorbell record (be32 at +0, low 16 bits). */
    int dbrRq() {
        return DeviceCq.be32(dbrView.getIntVolatile(0)) & 0xffff;
    }

    /** SQ producer counter in WQEBBs from the doorbell record (be32 at +4, low 16 bits). */
    int dbrSq() {
        return DeviceCq.be32(dbrView.getIntVolatile(4)) & 0xffff;
    }

    /** Ring offset (in the QP buffer) of SQ WQEBB {@code index}. */
    long sqSlotOffset(int index) {
        return sqOffset + ((long) (index & (sqCount - 1)) << SendWqeLayout.WQEBB_SHIFT);
    }

    long rqSlotOffset(int index) {
        return (long) (index & (rqCount - 1)) << rqStrideShift;
    }

    boolean sendAllowed() {
        return state == QpLayouts.STATE_RTS;
    }

    boolean recvAllowed() {
        return state == QpLayouts.STATE_INIT || state == QpLayouts.STATE_RTR || state == QpLayouts.STATE_RTS;
    }

    boolean inError() {
        return state == QpLayouts.STATE_ERR;
    }
}
