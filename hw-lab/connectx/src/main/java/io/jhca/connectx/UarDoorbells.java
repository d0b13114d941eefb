package io.jhca.connectx;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.CqArm;
import io.jhca.doorbell.UarDoorbell;
import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.SendWqeLayout;

/**
 * The doorbell registers of every allocated UAR page (UAR n = BAR0 + n * 4 KiB), taken with atomic swaps to 0 since
 * BAR0 is memory here:
 * <ul>
 *   <li>0x20, 8 bytes: CQ arm, be32 {@code sn << 28 | cmd | ci} then be32 cqn (doorbell.h MLX5_CQ_DOORBELL);</li>
 *   <li>0x40 / 0x48, 4 bytes: EQ consumer index with / without re-arm, be32 {@code eqn << 24 | ci} (kernel eq.c
 *       {@code eq_update_ci}; EQ numbers start at 1 here, so a word of 0 is never a doorbell);</li>
 *   <li>0x800 + k * 0x100, k = 0..7, 8 bytes: send doorbells of the four bfregs' halves (log_bf_reg_size 9): the
 *       first 8 bytes of the last WQE's control segment (rdma-core qp.c {@code post_send_db}).</li>
 * </ul>
 * Every CQ doorbell written reaches hardware; here a second one written before the device reads the first replaces
 * it, so each CQ doorbell taken is followed by a look at the CQs' doorbell records, which the driver writes first
 * (see {@link DeviceCq#armFromRecord}).
 * Send doorbells are counted and checked, not obeyed: the SQ doorbell record is what the device follows. A doorbell
 * whose QPN is unknown, which came on another UAR page than the QP's, whose WQE index is not posted yet in the
 * doorbell record, or whose 8 bytes differ from that WQE's control segment, is a driver bug and counted as
 * {@link ModelCounters.Counter#SQ_DOORBELL_MISMATCHES}.
 */
final class UarDoorbells {

    static final int EQ_ARM = 0x40;
    static final int EQ_UPDATE = 0x48;
    static final int SQ_DOORBELL_SLOTS = 8;
    static final int SQ_DOORBELL_STRIDE = 0x100;

    private static final boolean SWAP = ByteOrder.nativeOrder() != ByteOrder.BIG_ENDIAN;

    private final UnsafeBuffer bar;
    private final DeviceState st;
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);

    UarDoorbells(UnsafeBuffer bar, DeviceState st) {
        this.bar = bar;
        this.st = st;
    }

    int poll() {
        int work = 0;
        for (int u = 1; u < ModelCaps.BAR0_PAGES; u++) {
            if (!st.uarAllocated[u]) {
                continue;
            }
            int page = u * UarDoorbell.UAR_PAGE_SIZE;
            long arm = take64(page + CqArm.CQ_DOORBELL);
            if (arm != 0) {
                work++;
                work += cqArm(u, arm);
            }
            work += eq(page + EQ_ARM, true);
            work += eq(page + EQ_UPDATE, false);
            for (int k = 0; k < SQ_DOORBELL_SLOTS; k++) {
                long db = take64(page + UarDoorbell.BF_OFFSET + k * SQ_DOORBELL_STRIDE);
                if (db != 0) {
                    work++;
                    sendDoorbell(u, db);
                }
            }
        }
        return work;
    }

    private long take64(int offset) {
        if (bar.getLongVolatile(offset) == 0) {
            return 0; // a plain read first: no locked instruction on the common, empty path
        }
        long raw = bar.getAndSetLong(offset, 0);
        return SWAP ? Long.reverseBytes(raw) : raw; // be64 as the driver stored it
    }

    /**
     * A CQ arm doorbell on UAR page {@code uar}; then every CQ's doorbell record is looked at for arms whose doorbells
     * this one (or one taken earlier) replaced before the device read them ({@link DeviceCq#armFromRecord}). Returns
     * the number of arms recovered that way.
     */
    private int cqArm(int uar, long value) {
        st.counters.increment(ModelCounters.Counter.CQ_ARM_DOORBELLS);
        int word = (int) (value >>> 32);
        int cqn = (int) value & 0xffffff;
        DeviceCq cq = st.cqs.get(cqn);
        boolean firstArm = false;
        if (cq != null) {
            firstArm = !cq.armTakenOnce() && word == 0;
            cq.armDoorbell(word);
        }
        int recovered = 0;
        for (int i = 0; i < st.cqList.size(); i++) {
            DeviceCq other = st.cqList.get(i);
            if (other != cq) {
                recovered += other.armFromRecord(firstArm && other.uar == uar);
            }
        }
        return recovered;
    }

    private int eq(int offset, boolean arm) {
        if (bar.getIntVolatile(offset) == 0) {
            return 0;
        }
        int raw = bar.getAndSetInt(offset, 0);
        if (raw == 0) {
            return 0;
        }
        int v = SWAP ? Integer.reverseBytes(raw) : raw;
        st.counters.increment(ModelCounters.Counter.EQ_DOORBELLS);
        DeviceEq eq = st.eqs.get(v >>> 24);
        if (eq != null) {
            eq.doorbell(v & 0xffffff, arm);
        }
        // taken, but no work for the idle strategy: nothing the firmware must stay awake for follows an EQ's
        // consumer index or arm (the event thread re-arms it every 100 ms while the device is quiet)
        return 0;
    }

    private void sendDoorbell(int uar, long db) {
        st.counters.increment(ModelCounters.Counter.SQ_DOORBELLS);
        int qpn = (int) db >>> 8;            // qpn_ds bits 31:8
        int index = (int) (db >>> 40) & 0xffff; // opmod_idx_opcode bits 23:8
        DeviceQp qp = st.qp(qpn);
        if (qp == null || qp.uar != uar || qp.sqCount == 0 || qp.faulted) {
            st.counters.increment(ModelCounters.Counter.SQ_DOORBELL_MISMATCHES);
            return;
        }
        int posted = (qp.dbrSq() - index) & 0xffff;
        if (posted == 0 || posted > qp.sqCount) {
            st.counters.increment(ModelCounters.Counter.SQ_DOORBELL_MISMATCHES); // doorbell before its record
            return;
        }
        qp.buffer.wrap(view, qp.sqSlotOffset(index), SendWqeLayout.WQEBB);
        long ctrl = view.getLong(CtrlSeg.OPMOD_IDX_OPCODE_OFFSET, ByteOrder.BIG_ENDIAN);
        if (ctrl != db) {
            st.counters.increment(ModelCounters.Counter.SQ_DOORBELL_MISMATCHES);
        }
    }
}
