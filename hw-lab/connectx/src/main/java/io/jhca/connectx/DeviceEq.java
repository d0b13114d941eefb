package io.jhca.connectx;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;

/**
 * An event queue: a ring of 64-byte EQEs the device fills and the driver consumes, telling the device its consumer
 * index through the EQ doorbell (UAR + 0x40 / 0x48, be32 {@code eqn << 24 | ci}, kernel eq.c {@code eq_update_ci}).
 * The device writes an entry's body, then its owner byte {@code (pi >> log_eq_size) & 1}, so the kernel's
 * {@code next_eqe_sw} rule (owner == wrap parity of ci) holds. A full EQ drops the event (counted): real firmware would
 * raise a fatal "async EQ buffer overrun" health syndrome instead.
 */
final class DeviceEq {

    /** device.h {@code struct mlx5_eqe_comp}: the CQN is the seventh be32 of the data. */
    static final int COMP_CQN = 24;
    /** device.h {@code struct mlx5_eqe_cmd}: be32 vector of completed command slots at data + 0. */
    static final int CMD_VECTOR = 0;

    final int eqn;
    final int logSize;
    final int uar;
    final PagedBuffer ring;
    private final long[] eventMask;
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    private final ModelCounters counters;
    /** Producer counter (free running). */
    int pi;
    /** Consumer counter as last rung by the driver (24 bits). */
    int ci;
    /** CQs reporting to this EQ. */
    int users;
    /** Its memory was unmapped: never written again. */
    boolean faulted;
    /** The MSI-X vector it interrupts (eqc.intr). */
    final int intr;
    /** Armed by the doorbell at UAR + 0x40: the next entry raises the vector, once. */
    boolean armed;
    private final DeviceState st;

    DeviceEq(int eqn, int logSize, int uar, PagedBuffer ring, long[] eventMask, int intr, DeviceState st) {
        this.eqn = eqn;
        this.intr = intr;
        this.st = st;
        this.logSize = logSize;
        this.uar = uar;
        this.ring = ring;
        this.eventMask = eventMask.clone();
        this.counters = st.counters;
    }

    /**
     * The doorbell: the driver's consumer index, and with {@code arm} (UAR + 0x40) a request for one interrupt at the
     * next entry; entries it has not consumed yet raise it at once.
     *
     * <p>A consumer index behind the one the device holds is not taken. On hardware both doorbells update one
     * register in the order the driver wrote them, but here they are two words read in turn, so an arm written
     * between the two reads of one poll is taken after the update that followed it, with its older index (the
     * driver arms from its event thread and updates from its command path). Taken, that index would make entries the
     * driver has consumed count as pending until its next doorbell: the EQ would look full and drop events. The
     * driver's index never moves back, so an index behind is always such a stale word.
     */
    void doorbell(int consumer, boolean arm) {
        if (((consumer - ci) & 0xffffff) <= ((pi - ci) & 0xffffff)) {
            ci = consumer & 0xffffff;
        }
        if (arm) {
            armed = true;
            if (((pi - ci) & 0xffffff) != 0) {
                raise();
            }
        }
    }

    private void raise() {
        armed = false;
        java.util.function.IntConsumer sink = st.interrupts;
        if (sink != null) {
            sink.accept(intr);
        }
    }

    /** Whether CREATE_EQ's event_bitmask selected {@code type} (bit type % 64 of word type / 64). */
    boolean wants(int type) {
        return ((eventMask[type >>> 6] >>> (type & 63)) & 1) != 0;
    }

    /** A CQ_ERROR event (device.h {@code struct mlx5_eqe_cq_err}). */
    void cqError(int cqn, int syndrome) {
        if (claim()) {
            Eqe.setCqError(view, 0, cqn, syndrome);
            publish();
        }
    }

    /**
     * A QP or SRQ event (device.h {@code struct mlx5_eqe_qp_srq}: the QPN or SRQN in qp_srq_n), e.g. SRQ_RQ_LIMIT or
     * SRQ_LAST_WQE.
     */
    void qpSrqEvent(int type, int number) {
        if (claim()) {
            Eqe.setQpEvent(view, 0, type, number);
            publish();
        }
    }

    /** A completion event for an armed CQ (device.h {@code struct mlx5_eqe_comp}, type COMP). */
    void completion(int cqn) {
        if (claim()) {
            view.setMemory(0, Eqe.OWNER_OFFSET, (byte) 0);
            view.putByte(Eqe.TYPE_OFFSET, (byte) EventType.COMP);
            view.putInt(Eqe.DATA_OFFSET + COMP_CQN, cqn & 0xffffff, ByteOrder.BIG_ENDIAN);
            publish();
        }
    }

    /** An affiliated QP event of {@code type} (device.h {@code struct mlx5_eqe_qp_srq}, queue type 0: a QP). */
    void qpEvent(int type, int qpn) {
        if (claim()) {
            Eqe.setQpEvent(view, 0, type, qpn);
            publish();
        }
    }

    /** A command-completion event: the bit vector of slots just completed (device.h {@code struct mlx5_eqe_cmd}). */
    void commandDone(int slotVector) {
        if (claim()) {
            view.setMemory(0, Eqe.OWNER_OFFSET, (byte) 0);
            view.putByte(Eqe.TYPE_OFFSET, (byte) EventType.CMD);
            view.putInt(Eqe.DATA_OFFSET + CMD_VECTOR, slotVector, ByteOrder.BIG_ENDIAN);
            publish();
        }
    }

    /** A page request: the firmware wants {@code numPages} more pages, or returns {@code -numPages} (mlx5_eqe_page_req). */
    void pageRequest(int functionId, int numPages) {
        if (claim()) {
            Eqe.setPageRequest(view, 0, functionId, numPages);
            publish();
        }
    }

    private boolean claim() {
        int nent = 1 << logSize;
        if (faulted || ((pi - ci) & 0xffffff) >= nent) {
            counters.increment(ModelCounters.Counter.EQES_DROPPED);
            return false;
        }
        ring.wrap(view, (long) (pi & (nent - 1)) * Eqe.SIZE, Eqe.SIZE);
        return true;
    }

    private void publish() {
        Eqe.setOwner(view, 0, (pi >>> logSize) & 1); // release fence, then the owner byte
        pi++;
        counters.increment(ModelCounters.Counter.EQES);
        if (armed) {
            raise();
        }
    }
}
