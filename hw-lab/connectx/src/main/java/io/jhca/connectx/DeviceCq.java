package io.jhca.connectx;

import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.CqArm;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.eq.EventType;
import io.jhca.verbs.CompletionQueue;

/**
 * A completion queue as the device keeps it: the ring (pages from CREATE_CQ's PAS), the doorbell record the driver
 * updates (be32 consumer index at +0, be32 arm word at +4, rdma-core cq.c {@code update_cons_index} /
 * {@code mlx5_arm_cq}), its EQ, and the producer counter.
 *
 * <p>Writing a CQE ({@link #claim} then {@link #publish}): the slot is free only while fewer than {@code 2^log_cq_size}
 * CQEs are unconsumed by the driver's consumer index; otherwise the CQ has overrun (unless created with {@code oi}):
 * it goes to error, a CQ_ERROR event with syndrome CQ_OVERRUN goes to the async EQ, and no CQE is ever written over an
 * unconsumed one again. The body is written first, then a release fence, then {@code op_own} whose owner bit is
 * {@code (pi >> log_cq_size) & 1}, so rdma-core's rule {@code owner == !!(ci & cqe_cnt)} finds it.
 */
final class DeviceCq {

    final int cqn;
    final int logSize;
    /** 64 or 128; a 128-byte CQE keeps its mlx5_cqe64 in the second half (mlx5dv.h, rdma-core cq.c). */
    final int cqeSize;
    final int uar;
    final PagedBuffer ring;
    final DeviceEq eq;
    final boolean overrunIgnore;
    final CompletionQueue rxeCq;
    /** The doorbell record's 8 bytes, host memory resolved at CREATE_CQ. */
    final long dbrHost;
    private final UnsafeBuffer dbrView;
    private final UnsafeBuffer view = new UnsafeBuffer(0, 0);
    private final ModelCounters counters;
    private final AsyncEvents async;
    /** Producer counter (free running). */
    int pi;
    /** Overran, memory unmapped, or the rxe side overran: nothing is written any more. */
    boolean error;
    /** QPs completing into this CQ. */
    int users;
    private boolean armed;
    private boolean armSolicitedOnly;
    /**
     * The arm word last taken, from the UAR doorbell or from the record; until the first, the record's word at
     * CREATE_CQ. A record word different from it is an arm not taken yet.
     */
    private int armSeen;
    /** An arm has been taken since CREATE_CQ. */
    private boolean armTakenOnce;
    /** The arm {@link #armSeen} was taken from the record: its UAR doorbell, if it still comes, is the same arm. */
    private boolean armDoorbellPending;

    /** Reports CQ errors to the async EQ (the EQ subscribed to CQ_ERROR). */
    interface AsyncEvents {
        void cqError(DeviceCq cq, int syndrome);
    }

    DeviceCq(int cqn, int logSize, int cqeSize, int uar, PagedBuffer ring, long dbrHost, DeviceEq eq,
            boolean overrunIgnore, CompletionQueue rxeCq, ModelCounters counters, AsyncEvents async) {
        this.cqn = cqn;
        this.logSize = logSize;
        this.cqeSize = cqeSize;
        this.uar = uar;
        this.ring = ring;
        this.dbrHost = dbrHost;
        this.dbrView = new UnsafeBuffer(dbrHost, 8);
        this.eq = eq;
        this.overrunIgnore = overrunIgnore;
        this.rxeCq = rxeCq;
        this.counters = counters;
        this.async = async;
        this.armSeen = armWord();
    }

    /** The arm word of the doorbell record: be32 {@code sn << 28 | cmd | ci} at dbr + 4 (MLX5_CQ_ARM_DB). */
    int armWord() {
        return be32(dbrView.getIntVolatile(4)); // big-endian in memory
    }

    /** The driver's consumer index: be32 at dbr + 0, 24 bits (MLX5_CQ_SET_CI). */
    int consumerIndex() {
        return be32(dbrView.getIntVolatile(0)) & 0xffffff; // big-endian in memory
    }

    /**
     * A view of the next CQE's 64 bytes (struct mlx5_cqe64), zeroed except op_own, or null if the CQ cannot take one
     * (full: overrun, or already in error). Fill it, then {@link #publish}.
     */
    UnsafeBuffer claim() {
        if (error) {
            counters.increment(ModelCounters.Counter.CQES_DROPPED);
            return null;
        }
        int n = 1 << logSize;
        if (!overrunIgnore && (((pi & 0xffffff) - consumerIndex()) & 0xffffff) >= n) {
            overrun(EventType.CQ_ERROR_OVERRUN);
            counters.increment(ModelCounters.Counter.CQES_DROPPED);
            return null;
        }
        long slot = (long) (pi & (n - 1)) * cqeSize + (cqeSize - Cqe64.SIZE);
        ring.wrap(view, slot, Cqe64.SIZE);
        view.setMemory(0, Cqe64.OP_OWN_OFFSET, (byte) 0);
        return view;
    }

    /** Makes the claimed CQE the driver's: release fence, then op_own = opcode &lt;&lt; 4 | se &lt;&lt; 1 | owner. */
    void publish(int cqeOpcode, boolean solicited) {
        int owner = (pi >>> logSize) & 1;
        view.putByteVolatile(Cqe64.OP_OWN_OFFSET, (byte) (cqeOpcode << 4 | (solicited ? 2 : 0) | owner));
        pi++;
        counters.increment(ModelCounters.Counter.CQES);
        if (armed && (!armSolicitedOnly || solicited)) {
            armed = false;
            fireEvent();
        }
    }

    /**
     * The arm doorbell (UAR + 0x20: be32 {@code sn << 28 | cmd | ci}, be32 cqn; doorbell CqArm) names this CQ. If its
     * arm was already taken from the doorbell record, it is that arm again and is dropped once; otherwise it is taken.
     */
    void armDoorbell(int word) {
        if (armDoorbellPending && word == armSeen) {
            armDoorbellPending = false;
            return;
        }
        take(word, false);
    }

    /** Whether an arm was ever taken for this CQ. */
    boolean armTakenOnce() {
        return armTakenOnce;
    }

    /**
     * Looks at the record's arm word for an arm whose UAR doorbell never came (another CQ's doorbell on the same page
     * replaced it before the device read it: on hardware each MMIO write arrives, in this BAR memory the last one
     * wins). rdma-core mlx5_arm_cq writes the record before the doorbell, so when a doorbell is taken every arm
     * written before it shows in its CQ's record. A word that differs from the last one taken is a new arm: after an
     * event the driver's arm_sn has moved on (cq.c mlx5_cq_event), before one its ci or cmd did.
     *
     * <p>{@code firstArmOnPage}: the doorbell just taken was another CQ's first arm, at ci 0 with arm_sn 0 (word 0).
     * Such an arm writes the word the record was created with (0), which no watching can tell from no arm at all. A
     * CQ that never took an arm, has no CQE yet and still holds word 0 is then taken as armed as well, since tools arm
     * their fresh CQs back to back once connected (perftest's send and receive CQs). The price: a CQ on that page
     * that was never armed is armed here too, and raises one event on its first CQE. Returns 1 if an arm was taken.
     */
    int armFromRecord(boolean firstArmOnPage) {
        if (error) {
            return 0;
        }
        int word = armWord();
        boolean fresh = !armTakenOnce && pi == 0 && word == armSeen && word == 0;
        if (word == armSeen && !(firstArmOnPage && fresh)) {
            return 0;
        }
        counters.increment(ModelCounters.Counter.CQ_ARMS_RECOVERED);
        take(word, true);
        return 1;
    }

    private void take(int word, boolean fromRecord) {
        armSeen = word;
        armTakenOnce = true;
        armDoorbellPending = fromRecord;
        arm(word);
    }

    /**
     * An arm: armed for the next CQE, or for the next solicited one; if CQEs past {@code ci} are already there, the
     * event fires at once (the PRM's rule for an arm with a consumer index older than the producer index).
     */
    private void arm(int word) {
        if (error) {
            return;
        }
        int ci = word & 0xffffff;
        armSolicitedOnly = (word & CqArm.REQ_NOT_SOL) != 0;
        if (((pi - ci) & 0xffffff) != 0 && !armSolicitedOnly) {
            fireEvent();
            return;
        }
        armed = true;
    }

    private void fireEvent() {
        if (eq != null && !eq.faulted) {
            eq.completion(cqn);
        }
    }

    /** Puts the CQ in error for good and reports it (overrun, or its memory went away). */
    void overrun(int syndrome) {
        if (!error) {
            error = true;
            if (syndrome == EventType.CQ_ERROR_OVERRUN) {
                counters.increment(ModelCounters.Counter.CQ_OVERRUNS);
            }
            async.cqError(this, syndrome);
        }
    }

    /** Byte order note: the doorbell record holds big-endian words; {@link #consumerIndex} swaps on load. */
    static int be32(int raw) {
        return ByteOrder.nativeOrder() == ByteOrder.BIG_ENDIAN ? raw : Integer.reverseBytes(raw);
    }
}
