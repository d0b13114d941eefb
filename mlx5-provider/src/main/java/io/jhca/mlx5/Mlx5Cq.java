package io.jhca.mlx5;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.CqArm;
import io.jhca.doorbell.UarDoorbell;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CqLayouts;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.init.PrmCommand;
import io.jhca.mlx5.ring.CqPoller;
import io.jhca.mlx5.ring.CqBuffer;
import io.jhca.mlx5.ring.DbrPool;
import io.jhca.mlx5.ring.DirectCq;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WorkCompletion;

/**
 * A completion queue: a ring of {@code ncqe = roundup_pow_of_two(cqe + 1)} 64-byte CQEs in DMA memory (rdma-core
 * {@code align_queue_size(cqe + 1)}; capacity {@code ncqe - 1}), its doorbell record, and CREATE_CQ with cqc
 * log_cq_size, uar_page, c_eqn (the async EQ), cqe_sz 64, log_page_size 0 (4 KiB pages), dbr_addr and the PAS list.
 * Completion events come as COMP EQEs on that same EQ (vector 0), so the event thread hands them to the CQ's channel.
 *
 * <p>Polling follows {@link CqPoller}. A CQ error reported on the async EQ (CQ_ERROR, e.g. an overrun) puts the CQ in
 * error: every poll from then on throws ({@link CompletionQueue#overrun()}); an empty poll looks at the EQ first, so the
 * overrun is seen at once.
 *
 * <p>Once the device is dead ({@link Mlx5Context#deviceDead}), the first poll that finds the ring empty switches the
 * CQ to software completions: WR_FLUSH_ERR for every WR still outstanding on its QPs, as mlx5_ib does in its
 * internal-error state.
 */
final class Mlx5Cq extends CompletionQueue {

    private final Mlx5Context ctx;
    private final DmaRegion memory;
    private final DbrPool.Slot dbr;
    private final CqBuffer ring;
    private final CqPoller poller;
    private volatile int errorSyndrome;
    private final CqArm arm;
    /** The QPs whose outstanding WRs this CQ completes in software once the device is dead; null while it lives. */
    private Mlx5Qp[] flushQps;
    /** The CQ as {@link Mlx5Direct} polls it, or null while the verbs poll (plain: taken by the polling thread). */
    private DirectCq direct;
    /** Arm sequence number: counts the CQ's events (cq.c mlx5_cq_event); its low 2 bits go into each arm. */
    private volatile int armSn;

    private Mlx5Cq(Mlx5Context ctx, int cqn, int capacity, DmaRegion memory, DbrPool.Slot dbr, CqBuffer ring) {
        super(ctx, cqn, capacity);
        this.ctx = ctx;
        this.memory = memory;
        this.dbr = dbr;
        this.ring = ring;
        this.poller = new CqPoller(ring, qpn -> ctx.qps().get(qpn));
        this.arm = new CqArm(ctx.function().bar0(), ctx.hca().uar() * UarDoorbell.UAR_PAGE_SIZE, dbr.record(), cqn);
    }

    static Mlx5Cq create(Mlx5Context ctx, int cqe) {
        int ncqe = Integer.highestOneBit(cqe) << 1;   // smallest power of two above cqe
        int max = 1 << Math.min(ctx.hca().caps().logMaxCqSz(), 30);
        if (ncqe > max) {
            throw new VerbsException(VerbsException.EINVAL, "create CQ: " + cqe + " CQEs need a ring of " + ncqe
                    + " entries, the device allows " + max);
        }
        int bytes = Math.max(4096, ncqe * Cqe64.SIZE);
        DmaRegion mem = ctx.function().allocateDma(bytes);
        DbrPool.Slot slot = null;
        int cqn = -1;
        try {
            UnsafeBuffer buf = mem.buffer(0, bytes);
            CqBuffer.initialize(buf, ncqe);
            slot = ctx.dbrs().allocate();
            int pages = bytes / 4096;
            PrmCommand c = PrmCommand.of(CmdOpcode.CREATE_CQ, CqLayouts.CREATE_CQ_IN, CqLayouts.CREATE_CQ_IN.sizeBytes(pages),
                            CqLayouts.CREATE_CQ_OUT, CqLayouts.CREATE_CQ_OUT.sizeBytes())
                    .set("cq_context.log_cq_size", Integer.numberOfTrailingZeros(ncqe))
                    .set("cq_context.uar_page", ctx.hca().uar())
                    .set("cq_context.c_eqn_or_apu_element", ctx.hca().eq().eqn())
                    .set("cq_context.cqe_sz", CqLayouts.CQE_SZ_64)
                    .set("cq_context.log_page_size", 0)
                    .set("cq_context.page_offset", 0)
                    .set("cq_context.dbr_addr", slot.iova());
            for (int i = 0; i < pages; i++) {
                c.setElement("pas", i, mem.iova((long) i * 4096));
            }
            cqn = (int) c.execute(ctx.hca().cmdq()).get("cqn");
            Mlx5Cq cq = new Mlx5Cq(ctx, cqn, ncqe - 1, mem, slot, new CqBuffer(buf, ncqe, slot.record()));
            ctx.cqs().put(cqn, cq);
            return cq;
        } catch (RuntimeException e) {
            if (cqn >= 0) {
                try {
                    destroyCq(ctx, cqn);
                } catch (RuntimeException undo) {
                    e.addSuppressed(undo);
                }
            }
            if (slot != null) {
                ctx.dbrs().free(slot);
            }
            mem.close();
            throw Mlx5Errors.of("create CQ on " + ctx.name(), e);
        }
    }

    private static void destroyCq(Mlx5Context ctx, int cqn) {
        PrmCommand.of(CmdOpcode.DESTROY_CQ, CqLayouts.DESTROY_CQ_IN, CqLayouts.DESTROY_CQ_OUT).set("cqn", cqn)
                .execute(ctx.hca().cmdq());
    }

    @Override
    protected int driverPoll(WorkCompletion wc) {
        if (direct != null) {
            throw new VerbsException(VerbsException.EINVAL, "poll " + describe()
                    + ": it is polled directly (Mlx5Direct.completionQueue)");
        }
        if (errorSyndrome != 0) {
            throw error();
        }
        if (flushQps != null) {
            return flushPoll(wc);
        }
        int n = poller.poll(wc);
        if (n == 0) {
            ctx.events().pollIfPending();
            if (errorSyndrome != 0) {
                throw error();
            }
            if (ctx.deadReason() != null) {
                startFlush();
                return flushPoll(wc);
            }
        }
        return n;
    }

    /**
     * The device is dead and the ring was found empty: from now on polls return software completions (mlx5_ib
     * {@code mlx5_ib_poll_sw_comp}) and read no CQE, so a WR the device might still complete late cannot come back a
     * second time. The QPs are those of the device now; one destroyed meanwhile leaves the list ({@link #clean}).
     */
    private void startFlush() {
        java.util.List<Mlx5Qp> mine = new java.util.ArrayList<>();
        for (Mlx5Qp qp : ctx.qps().values()) {
            if (qp.sendCqn() == cqn() || qp.recvCqn() == cqn()) {
                mine.add(qp);
            }
        }
        flushQps = mine.toArray(new Mlx5Qp[0]);
    }

    /** The next WR_FLUSH_ERR completion, QP by QP in QPN order; 0 once nothing is outstanding. */
    private int flushPoll(WorkCompletion wc) {
        Mlx5Qp[] list = flushQps;
        for (int i = 0; i < list.length; i++) {
            Mlx5Qp qp = list[i];
            if (qp != null && qp.flushOne(this, wc)) {
                return 1;
            }
        }
        return 0;
    }

    /** The device died with WRs of this CQ outstanding: a completion event wakes a poller that sleeps on the channel. */
    void deviceDead() {
        DirectCq d = direct;
        if (d != null) {
            d.invalidate(describe() + ": the device is dead (" + ctx.deadReason() + ")");
        }
        raiseCompletionEvent();
    }

    /**
     * Arms through the doorbell record's arm word and the UAR CQ doorbell (cq.c mlx5_arm_cq) with the consumer
     * index as polled so far; excluded from polls of a shared CQ, so the index is not mid-update.
     */
    @Override
    protected void driverRequestNotify(boolean solicitedOnly) {
        exclusive(() -> {
            DirectCq d = direct;
            arm.arm(armSn, d != null ? d.consumerIndex() : ring.consumerIndex(), solicitedOnly);
            return null;
        });
    }

    /** A COMP EQE named this CQ: the device disarmed it; count it for the next arm and tell the channel. */
    void completionEvent() {
        armSn++; // only the event thread (or a poller holding the EQ lock) writes it
        raiseCompletionEvent();
    }

    private VerbsException error() {
        VerbsException e = overrun();
        if (errorSyndrome != EventType.CQ_ERROR_OVERRUN) {
            return new VerbsException(VerbsException.EIO, describe() + ": the device reported a CQ error (syndrome 0x"
                    + Integer.toHexString(errorSyndrome) + ", access violation); the CQ is in error", e);
        }
        return e;
    }

    /** The async EQ reported a CQ_ERROR for this CQ: it is in error from now on, and CQ_ERR is posted at once. */
    void markError(int syndrome) {
        errorSyndrome = syndrome == 0 ? EventType.CQ_ERROR_OVERRUN : syndrome;
        DirectCq d = direct;
        if (d != null) {
            d.invalidate(error().getMessage());
        }
        overrun();   // posts the verbs CQ_ERR event (once), as the kernel does when the EQE arrives
    }

    CqBuffer ring() {
        return ring;
    }

    /**
     * Drops the CQEs of a QP that was reset or destroyed; excluded from polls of a shared CQ (a single-threaded CQ
     * must not be polled meanwhile, the application's part of that contract).
     */
    int clean(int qpn) {
        return exclusive(() -> {
            poller.forget(qpn);
            forgetFlush(qpn);
            DirectCq d = direct;
            return d != null ? d.clean(qpn, null) : ring.clean(qpn);
        });
    }

    /** {@link #clean(int)} for a QP of an SRQ: the receive WQEs of the CQEs dropped go back to the SRQ. */
    int clean(int qpn, io.jhca.mlx5.ring.SrqBuffer srq) {
        return exclusive(() -> {
            forgetFlush(qpn);
            DirectCq d = direct;
            return d != null ? d.clean(qpn, srq) : ring.clean(qpn, srq);
        });
    }

    /** A QP reset or destroyed has nothing left to flush here (its queues are empty or gone). */
    private void forgetFlush(int qpn) {
        Mlx5Qp[] list = flushQps;
        if (list != null) {
            for (int i = 0; i < list.length; i++) {
                if (list[i] != null && list[i].qpn() == qpn) {
                    list[i] = null;
                }
            }
        }
    }

    /** {@link Mlx5Direct#completionQueue}: polled directly from now on, until destroyed. */
    synchronized DirectCq takeDirect() {
        checkOpen();
        if (direct != null) {
            return direct;
        }
        if (errorSyndrome != 0) {
            throw error();
        }
        if (flushQps != null || ctx.deadReason() != null) {
            throw new VerbsException(VerbsException.EIO, describe() + ": the device is dead (" + ctx.deadReason() + ")");
        }
        direct = exclusive(() -> new DirectCq(ring, qpn -> ctx.qps().get(qpn)));
        return direct;
    }

    @Override
    protected void destroy() {
        DirectCq d = direct;
        if (d != null) {
            d.invalidate(describe() + " was destroyed");
        }
        try {
            destroyCq(ctx, cqn());
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("destroy " + describe() + " on " + ctx.name(), e);
        }
        ctx.cqs().remove(cqn());
        ctx.dbrs().free(dbr);
        memory.close();
    }
}
