package io.jhca.mlx5;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.SrqLayouts;
import io.jhca.mlx5.init.PrmCommand;
import io.jhca.mlx5.ring.DbrPool;
import io.jhca.mlx5.ring.ReceiveRing;
import io.jhca.mlx5.ring.SrqBuffer;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.SrqNextSeg;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqInitAttributes;
import io.jhca.verbs.VerbsException;

/**
 * A shared receive queue: a ring of {@link SrqBuffer} WQEs (sized as rdma-core's mlx5_alloc_srq_buf: WQE =
 * roundup_pow_of_two(max(32, 16 + 16 * max_sge)) bytes, roundup_pow_of_two(max_wr + 1) of them) given to the device
 * by CREATE_SRQ with its doorbell record; ARM_RQ arms the limit and QUERY_SRQ reads it back (the device clears lwm
 * when it raises the SRQ_RQ_LIMIT event). Resizing is refused, as mlx5_ib_modify_srq refuses IB_SRQ_MAX_WR.
 */
final class Mlx5Srq extends SharedReceiveQueue {

    private final Mlx5Context ctx;
    private final DmaRegion memory;
    private final DbrPool.Slot dbr;
    private final SrqBuffer ring;

    private Mlx5Srq(Mlx5Pd pd, int maxWr, int maxSge, int srqn, DmaRegion memory, DbrPool.Slot dbr, SrqBuffer ring) {
        super(pd, maxWr, maxSge);
        this.ctx = pd.mlx5Context();
        this.memory = memory;
        this.dbr = dbr;
        this.ring = ring;
        srqn(srqn);
    }

    static Mlx5Srq create(Mlx5Pd pd, SrqInitAttributes init) {
        Mlx5Context ctx = pd.mlx5Context();
        int wqeSize = Integer.highestOneBit(Math.max(32, SrqNextSeg.SIZE + init.maxSge() * DataSeg.SIZE) * 2 - 1);
        if (wqeSize > Mlx5Attributes.MAX_RECV_WQE) {
            throw new VerbsException(VerbsException.EINVAL, "create SRQ: a WQE of " + init.maxSge() + " SGEs exceeds "
                    + Mlx5Attributes.MAX_RECV_WQE + " bytes");
        }
        int wqeShift = Integer.numberOfTrailingZeros(wqeSize);
        int wqeCnt = Integer.highestOneBit((init.maxWr() + 1) * 2 - 1);
        int bytes = Math.max(4096, wqeCnt << wqeShift);
        int pages = (bytes + 4095) / 4096;
        DmaRegion mem = ctx.function().allocateDma((long) pages * 4096);
        DbrPool.Slot slot = null;
        int srqn = -1;
        try {
            slot = ctx.dbrs().allocate();
            slot.record().setRecvCounter(0);
            SrqBuffer ring = new SrqBuffer(mem.buffer(0, pages * 4096), wqeCnt, wqeShift, slot.record());
            PrmCommand c = PrmCommand.of(CmdOpcode.CREATE_SRQ, SrqLayouts.CREATE_SRQ_IN,
                            SrqLayouts.CREATE_SRQ_IN.sizeBytes(pages), SrqLayouts.CREATE_SRQ_OUT,
                            SrqLayouts.CREATE_SRQ_OUT.sizeBytes())
                    .set("srq_context_entry.log_srq_size", Integer.numberOfTrailingZeros(wqeCnt))
                    .set("srq_context_entry.log_rq_stride", wqeShift - 4)
                    .set("srq_context_entry.pd", pd.pdn())
                    .set("srq_context_entry.log_page_size", 0)
                    .set("srq_context_entry.page_offset", 0)
                    .set("srq_context_entry.dbr_addr", slot.iova());
            for (int i = 0; i < pages; i++) {
                c.setElement("pas", i, mem.iova((long) i * 4096));
            }
            srqn = (int) c.execute(ctx.hca().cmdq()).get("srqn");
            Mlx5Srq srq = new Mlx5Srq(pd, ring.maxPost(), ring.maxGs(), srqn, mem, slot, ring);
            ctx.srqs().put(srqn, srq);
            return srq;
        } catch (RuntimeException e) {
            if (srqn >= 0) {
                try {
                    destroySrq(ctx, srqn);
                } catch (RuntimeException undo) {
                    e.addSuppressed(undo);
                }
            }
            if (slot != null) {
                ctx.dbrs().free(slot);
            }
            mem.close();
            throw Mlx5Errors.of("create SRQ on " + ctx.name(), e);
        }
    }

    private static void destroySrq(Mlx5Context ctx, int srqn) {
        PrmCommand.of(CmdOpcode.DESTROY_SRQ, SrqLayouts.DESTROY_SRQ_IN, SrqLayouts.DESTROY_SRQ_OUT).set("srqn", srqn)
                .execute(ctx.hca().cmdq());
    }

    SrqBuffer ring() {
        return ring;
    }

    /**
     * The chain under one hold of the ring's lock, which completions take too and which serializes posters (rdma-core
     * mlx5_post_srq_recv: the SRQ's lock once per chain, and no other); the dead-device check once per chain.
     */
    @Override
    protected int driverPostRecvChain(RecvWr wr) {
        ctx.checkAlive("post recv", this);
        ring.lock();
        try {
            int posted = 0;
            for (RecvWr w = wr; w != null && ReceiveRing.post(ring, w); w = w.next()) {
                posted++;
            }
            if (posted > 0) {
                ring.ringDoorbell();
            }
            return posted;
        } finally {
            ring.unlock();
        }
    }

    @Override
    protected void driverArmLimit(int limit) {
        try {
            PrmCommand.of(CmdOpcode.ARM_RQ, SrqLayouts.ARM_RQ_IN, SrqLayouts.ARM_RQ_OUT)
                    .opMod(SrqLayouts.ARM_RQ_OP_MOD_SRQ)
                    .set("srq_number", srqn())
                    .set("lwm", limit)
                    .execute(ctx.hca().cmdq());
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("arm the limit of " + describe() + " on " + ctx.name(), e);
        }
    }

    @Override
    protected int driverQueryLimit() {
        try {
            return (int) PrmCommand.of(CmdOpcode.QUERY_SRQ, SrqLayouts.QUERY_SRQ_IN, SrqLayouts.QUERY_SRQ_IN.sizeBytes(),
                            SrqLayouts.QUERY_SRQ_OUT, SrqLayouts.QUERY_SRQ_OUT.sizeBytes())
                    .set("srqn", srqn())
                    .execute(ctx.hca().cmdq())
                    .get("srq_context_entry.lwm");
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("query " + describe() + " on " + ctx.name(), e);
        }
    }

    /** The device raised SRQ_RQ_LIMIT: fewer WQEs than the limit are posted; it disarmed the limit. */
    void limitReached() {
        ctx.event(AsyncEvent.of(AsyncEvent.Type.SRQ_LIMIT_REACHED, this, "device event type 0x14 (SRQ_RQ_LIMIT)"));
    }

    @Override
    protected void destroy() {
        try {
            destroySrq(ctx, srqn());
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("destroy " + describe() + " on " + ctx.name(), e);
        }
        ctx.srqs().remove(srqn());
        ctx.dbrs().free(dbr);
        memory.close();
    }
}
