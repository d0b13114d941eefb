package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.doorbell.Fences;
import io.jhca.doorbell.MmioWindow;
import io.jhca.doorbell.UarDoorbell;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CmdQueue;
import io.jhca.mlx5.cmd.CmdQueueOptions;
import io.jhca.mlx5.cmd.CommandException;
import io.jhca.mlx5.cmd.CqLayouts;
import io.jhca.mlx5.cmd.EqLayouts;
import io.jhca.mlx5.cmd.HcaCap;
import io.jhca.mlx5.cmd.HcaLayouts;
import io.jhca.mlx5.cmd.InitSegment;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.MkeyLayouts;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.RoceAddressLayouts;
import io.jhca.mlx5.cmd.Struct;
import io.jhca.mlx5.cmd.UarPdLayouts;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.init.FunctionCmdMemory;
import io.jhca.verbs.Gid;

/**
 * A minimal mlx5 "driver" for the model's tests, written only with the shared layers: the cmd package's host-side
 * {@link CmdQueue} and layouts, the doorbell package, and (in {@link DriverRings}) the wqe writers and cq readers. It
 * brings a {@link ModelFunction} up the way mlx5_core / rdma-core do and creates objects by raw PRM commands.
 */
final class HostDriver implements AutoCloseable {

    static final int PAGE = 4096;

    final ModelFunction fn;
    final MmioWindow bar0;
    final InitSegment iseg;
    final UnsafeBuffer in = new UnsafeBuffer(new byte[16384]);
    final UnsafeBuffer out = new UnsafeBuffer(new byte[16384]);
    private final List<DmaRegion> regions = new ArrayList<>();
    CmdQueue cmdq;
    int uar;
    int eqn;
    int pd;
    Eq asyncEq;
    private DmaRegion dbrPage;
    private int dbrNext;

    private HostDriver(ModelFunction fn) {
        this.fn = fn;
        this.bar0 = fn.bar0();
        this.iseg = new InitSegment(bar0);
    }

    static HostDriver open(String name, String ip) throws Exception {
        return new HostDriver(ModelFunction.open(name, InetAddress.getByName(ip)));
    }

    static HostDriver open(String name, String ip, long preInitMillis) throws Exception {
        return new HostDriver(ModelFunction.open(name, InetAddress.getByName(ip), preInitMillis));
    }

    ModelCounters counters() {
        return fn.model().counters();
    }

    DmaRegion dma(long bytes) {
        DmaRegion r = fn.allocateDma((bytes + PAGE - 1) & -PAGE);
        regions.add(r);
        return r;
    }

    /** An 8-byte doorbell record in a shared page, 64-byte slots as rdma-core's dbrec.c hands them out. */
    DoorbellRecord dbr(long[] iovaOut) {
        if (dbrPage == null || dbrNext >= PAGE) {
            dbrPage = dma(PAGE);
            dbrNext = 0;
        }
        DoorbellRecord d = new DoorbellRecord().wrap(dbrPage.buffer(), dbrNext);
        iovaOut[0] = dbrPage.iova(dbrNext);
        dbrNext += 64;
        return d;
    }

    // ------------------------------------------------------------------------------------------ commands

    /** Starts a command in {@link #in}: zeroed, opcode and op_mod set. */
    Struct cmd(Layout layout, int length, int opcode, int opMod) {
        Struct s = new Struct().wrap(layout, in, 0, length).clear();
        s.set("opcode", opcode);
        s.set("op_mod", opMod);
        return s;
    }

    Struct cmd(Layout layout, int opcode) {
        return cmd(layout, layout.sizeBytes(), opcode, 0);
    }

    /** Runs the command; the output in {@link #out} as a view of {@code outLayout}. */
    Struct run(Struct s, Layout outLayout, int outLength) {
        Struct o = new Struct().wrap(outLayout, out, 0, outLength);
        cmdq.execute(s, o);
        return o;
    }

    Struct run(Struct s, Layout outLayout) {
        return run(s, outLayout, outLayout.sizeBytes());
    }

    /** Runs a command expected to fail; returns the exception (status, syndrome). */
    CommandException refused(Struct s, Layout outLayout) {
        try {
            run(s, outLayout);
        } catch (CommandException e) {
            return e;
        }
        fail("command 0x" + Integer.toHexString((int) s.get("opcode")) + " succeeded; expected a refusal");
        return null;
    }

    // ------------------------------------------------------------------------------------------ bring-up

    /** Programs the command queue (after waiting for pre-init, as mlx5_core does), then waits for init again. */
    void openCommandQueue() throws Exception {
        assertTrue(iseg.awaitInitialized(10_000), "firmware pre-init did not end");
        cmdq = CmdQueue.open(iseg, new FunctionCmdMemory(fn), CmdQueueOptions.defaults().timeoutMillis(20_000));
        assertTrue(iseg.awaitInitialized(10_000), "firmware did not finish initializing after cmdq_phy_addr");
    }

    void enableHca() {
        run(cmd(HcaLayouts.ENABLE_HCA_IN, CmdOpcode.ENABLE_HCA), HcaLayouts.ENABLE_HCA_OUT);
    }

    int queryPages(int opMod) {
        return (int) run(cmd(HcaLayouts.QUERY_PAGES_IN, HcaLayouts.QUERY_PAGES_IN.sizeBytes(), CmdOpcode.QUERY_PAGES,
                opMod), HcaLayouts.QUERY_PAGES_OUT).get("num_pages");
    }

    void givePages(int n) {
        if (n <= 0) {
            return;
        }
        DmaRegion pages = dma((long) n * PAGE);
        Layout l = HcaLayouts.MANAGE_PAGES_IN;
        Struct s = cmd(l, l.sizeBytes(n), CmdOpcode.MANAGE_PAGES, HcaLayouts.PAGES_GIVE).set("input_num_entries", n);
        for (int k = 0; k < n; k++) {
            s.setElement("pas", k, pages.iova((long) k * PAGE));
        }
        run(s, HcaLayouts.MANAGE_PAGES_OUT);
    }

    Struct queryCaps() {
        return run(cmd(HcaLayouts.QUERY_HCA_CAP_IN, HcaLayouts.QUERY_HCA_CAP_IN.sizeBytes(), CmdOpcode.QUERY_HCA_CAP,
                HcaCap.opMod(HcaCap.TYPE_GENERAL, HcaCap.MODE_CURRENT)), HcaLayouts.QUERY_HCA_CAP_OUT);
    }

    /** The whole sequence up to a PD, an async EQ and GID 0 programmed. */
    HostDriver bringUp() throws Exception {
        openCommandQueue();
        enableHca();
        run(cmd(HcaLayouts.QUERY_ISSI_IN, CmdOpcode.QUERY_ISSI), HcaLayouts.QUERY_ISSI_OUT);
        run(cmd(HcaLayouts.SET_ISSI_IN, CmdOpcode.SET_ISSI).set("current_issi", 1), HcaLayouts.SET_ISSI_OUT);
        givePages(queryPages(HcaLayouts.PAGES_BOOT));
        queryCaps();
        givePages(queryPages(HcaLayouts.PAGES_INIT));
        run(cmd(HcaLayouts.INIT_HCA_IN, CmdOpcode.INIT_HCA), HcaLayouts.INIT_HCA_OUT);
        uar = (int) run(cmd(UarPdLayouts.ALLOC_UAR_IN, CmdOpcode.ALLOC_UAR), UarPdLayouts.ALLOC_UAR_OUT).get("uar");
        asyncEq = createEq(6, 1L << EventType.CQ_ERROR | 1L << EventType.PORT_CHANGE);
        eqn = asyncEq.eqn;
        pd = (int) run(cmd(UarPdLayouts.ALLOC_PD_IN, CmdOpcode.ALLOC_PD), UarPdLayouts.ALLOC_PD_OUT).get("pd");
        setGid(0, fn.portAddresses().get(0));
        return this;
    }

    void setGid(int index, InetAddress ip) {
        Gid g = Gid.of(ip);
        run(cmd(RoceAddressLayouts.SET_ROCE_ADDRESS_IN, CmdOpcode.SET_ROCE_ADDRESS)
                .set("roce_address_index", index)
                .setBytes("roce_address.source_l3_address", g.bytes())
                .set("roce_address.roce_l3_type", g.isIpv4Mapped() ? RoceAddressLayouts.L3_TYPE_IPV4
                        : RoceAddressLayouts.L3_TYPE_IPV6)
                .set("roce_address.roce_version", RoceAddressLayouts.ROCE_VERSION_2),
                RoceAddressLayouts.SET_ROCE_ADDRESS_OUT);
    }

    // ------------------------------------------------------------------------------------------ objects

    /** An EQ whose entries software initialised to owner 1 (rdma-core MLX5_EQE_OWNER_INIT_VAL). */
    final class Eq {
        final int eqn;
        final int nent;
        final UnsafeBuffer ring;
        int ci;

        Eq(int eqn, int nent, UnsafeBuffer ring) {
            this.eqn = eqn;
            this.nent = nent;
            this.ring = ring;
        }

        /** Offset of the next software-owned EQE, or -1. */
        int next() {
            int off = (ci & (nent - 1)) * Eqe.SIZE;
            if (!Eqe.isSoftwareOwned(Eqe.owner(ring, off), ci, nent)) {
                return -1;
            }
            ci++;
            return off;
        }

        /** Rings the EQ doorbell (UAR + 0x48, be32 eqn << 24 | ci, no re-arm). */
        void updateCi() {
            bar0.putIntBe(uar * PAGE + 0x48, eqn << 24 | (ci & 0xffffff));
        }
    }

    Eq createEq(int logSize, long eventMaskWord0) {
        int nent = 1 << logSize;
        DmaRegion ring = dma((long) nent * Eqe.SIZE);
        for (int k = 0; k < nent; k++) {
            ring.buffer().putByte(k * Eqe.SIZE + Eqe.OWNER_OFFSET, (byte) Eqe.OWNER_INIT);
        }
        int npages = (int) ((ring.length() + PAGE - 1) / PAGE);
        Layout l = EqLayouts.CREATE_EQ_IN;
        Struct s = cmd(l, l.sizeBytes(npages), CmdOpcode.CREATE_EQ, 0)
                .set("eq_context_entry.log_eq_size", logSize)
                .set("eq_context_entry.uar_page", uar)
                .setElement("event_bitmask", 0, eventMaskWord0);
        for (int k = 0; k < npages; k++) {
            s.setElement("pas", k, ring.iova((long) k * PAGE));
        }
        int n = (int) run(s, EqLayouts.CREATE_EQ_OUT).get("eq_number");
        return new Eq(n, nent, ring.buffer());
    }

    /** A CQ ring initialised to op_own 0xf0 (INVALID, owner 0) as rdma-core does; consumer index in its DBR. */
    final class Cq {
        final int cqn;
        final int cqeCnt;
        final int cqeSize;
        final UnsafeBuffer ring;
        final DoorbellRecord dbr;
        int ci;
        /** Free-running index of the CQE {@link #poll} returned last. */
        int lastIndex;

        Cq(int cqn, int cqeCnt, int cqeSize, UnsafeBuffer ring, DoorbellRecord dbr) {
            this.cqn = cqn;
            this.cqeCnt = cqeCnt;
            this.cqeSize = cqeSize;
            this.ring = ring;
            this.dbr = dbr;
        }

        /** Offset of the next CQE's mlx5_cqe64 if software owns it (then ci advances and the DBR is updated), else -1. */
        int poll() {
            int off = (ci & (cqeCnt - 1)) * cqeSize + (cqeSize - Cqe64.SIZE);
            int opOwn = ring.getByteVolatile(off + Cqe64.OP_OWN_OFFSET) & 0xff;
            if (!Cqe64.isSoftwareOwned(opOwn, ci, cqeCnt)) {
                return -1;
            }
            Fences.ownerBeforeCqeBody();
            lastIndex = ci;
            ci++;
            dbr.setConsumerIndex(ci);
            return off;
        }

        /** Like {@link #poll} but leaves the consumer index record alone (an application that stopped polling). */
        int peek(int index) {
            int off = (index & (cqeCnt - 1)) * cqeSize + (cqeSize - Cqe64.SIZE);
            int opOwn = ring.getByteVolatile(off + Cqe64.OP_OWN_OFFSET) & 0xff;
            return Cqe64.isSoftwareOwned(opOwn, index, cqeCnt) ? off : -1;
        }

        /** Waits for the next CQE; returns its 64 bytes. */
        byte[] await() {
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (true) {
                int off = poll();
                if (off >= 0) {
                    byte[] b = new byte[Cqe64.SIZE];
                    ring.getBytes(off, b);
                    return b;
                }
                if (System.nanoTime() > deadline) {
                    fail("no CQE on CQ " + cqn + " within 10 s; model counters: " + counters()
                            + "; last command error: " + fn.model().lastCommandError());
                }
                Thread.onSpinWait();
            }
        }

        /** The owner bit the device must have written for the CQE {@link #poll} returned last. */
        int lastOwner() {
            return (lastIndex / cqeCnt) & 1;
        }

        /** Asserts that no CQE arrives within {@code millis}. */
        void assertEmpty(long millis) throws InterruptedException {
            Thread.sleep(millis);
            assertEquals(-1, peek(ci), "unexpected CQE on CQ " + cqn);
        }
    }

    Cq createCq(int logSize) {
        return createCq(logSize, CqLayouts.CQE_SZ_64, false);
    }

    Cq createCq(int logSize, int cqeSz, boolean oi) {
        int n = 1 << logSize;
        int cqeSize = cqeSz == CqLayouts.CQE_SZ_64 ? 64 : 128;
        DmaRegion ring = dma((long) n * cqeSize);
        for (int k = 0; k < n; k++) {
            ring.buffer().putByte(k * cqeSize + cqeSize - 1, (byte) 0xf0);
        }
        long[] dbrIova = new long[1];
        DoorbellRecord dbr = dbr(dbrIova);
        int npages = (int) ((ring.length() + PAGE - 1) / PAGE);
        Layout l = CqLayouts.CREATE_CQ_IN;
        Struct s = cmd(l, l.sizeBytes(npages), CmdOpcode.CREATE_CQ, 0)
                .set("cq_context.log_cq_size", logSize)
                .set("cq_context.cqe_sz", cqeSz)
                .set("cq_context.oi", oi)
                .set("cq_context.uar_page", uar)
                .set("cq_context.c_eqn_or_apu_element", eqn)
                .set("cq_context.log_page_size", 0)
                .set("cq_context.dbr_addr", dbrIova[0]);
        for (int k = 0; k < npages; k++) {
            s.setElement("pas", k, ring.iova((long) k * PAGE));
        }
        int cqn = (int) run(s, CqLayouts.CREATE_CQ_OUT).get("cqn");
        return new Cq(cqn, n, cqeSize, ring.buffer(), dbr);
    }

    /** An MTT key over a whole region (mapped for the device first), start_addr = its virtual address. */
    int createMkey(DmaRegion region, boolean lw, boolean rr, boolean rw, boolean a) {
        return createMkey(region, region.address(), region.length(), lw, rr, rw, a, 0x42);
    }

    int createMkey(DmaRegion region, long start, long len, boolean lw, boolean rr, boolean rw, boolean a, int variant) {
        fn.mapForDevice(region);
        int npages = (int) ((region.length() + PAGE - 1) / PAGE);
        Layout l = MkeyLayouts.CREATE_MKEY_IN;
        String m = "memory_key_mkey_entry.";
        Struct s = cmd(l, MkeyLayouts.createMkeyInLength(npages), CmdOpcode.CREATE_MKEY, 0)
                .set(m + "access_mode_1_0", MkeyLayouts.ACCESS_MODE_MTT)
                .set(m + "lr", 1).set(m + "lw", lw).set(m + "rr", rr).set(m + "rw", rw).set(m + "a", a)
                .set(m + "qpn", 0xffffff)
                .set(m + "mkey_7_0", variant)
                .set(m + "pd", pd)
                .set(m + "start_addr", start)
                .set(m + "len", len)
                .set(m + "translations_octword_size", MkeyLayouts.octwords(npages))
                .set(m + "log_page_size", 12)
                .set("translations_octword_actual_size", MkeyLayouts.octwords(npages));
        for (int k = 0; k < npages; k++) {
            s.setElement("klm_pas_mtt", k, MkeyLayouts.mttEntry(region.iova((long) k * PAGE), MkeyLayouts.MTT_PERM_RW));
        }
        int index = (int) run(s, MkeyLayouts.CREATE_MKEY_OUT).get("mkey_index");
        return index << 8 | variant;
    }

    /** CREATE_QP with the RQ then the SQ in one buffer; returns the rings handle. */
    DriverRings createQp(int st, Cq scq, Cq rcq, int logSq, int logRq, int logRqStride) {
        return createQp(st, scq, rcq, logSq, logRq, logRqStride, 0x1234);
    }

    DriverRings createQp(int st, Cq scq, Cq rcq, int logSq, int logRq, int logRqStride, int userIndex) {
        int rqBytes = (1 << logRq) << (logRqStride + 4);
        int sqBytes = (1 << logSq) * 64;
        DmaRegion buf = dma(rqBytes + sqBytes);
        long[] dbrIova = new long[1];
        DoorbellRecord dbr = dbr(dbrIova);
        int npages = (int) ((buf.length() + PAGE - 1) / PAGE);
        Layout l = QpLayouts.CREATE_QP_IN;
        Struct s = cmd(l, l.sizeBytes(npages), CmdOpcode.CREATE_QP, 0)
                .set("qpc.st", st)
                .set("qpc.pm_state", QpLayouts.PM_STATE_MIGRATED)
                .set("qpc.pd", pd)
                .set("qpc.uar_page", uar)
                .set("qpc.user_index", userIndex)
                .set("qpc.log_sq_size", logSq)
                .set("qpc.log_rq_size", logRq)
                .set("qpc.log_rq_stride", logRqStride)
                .set("qpc.cqn_snd", scq.cqn)
                .set("qpc.cqn_rcv", rcq.cqn)
                .set("qpc.log_page_size", 0)
                .set("qpc.dbr_addr", dbrIova[0]);
        for (int k = 0; k < npages; k++) {
            s.setElement("pas", k, buf.iova((long) k * PAGE));
        }
        int qpn = (int) run(s, QpLayouts.CREATE_QP_OUT).get("qpn");
        UarDoorbell bf = UarDoorbell.bfreg(bar0, uar * PAGE, 0, 512);
        return new DriverRings(this, qpn, st, buf.buffer(), rqBytes, 1 << logRq, logRqStride + 4, 1 << logSq, dbr, bf,
                userIndex);
    }

    /** Runs a QP modify command with the qpc filled by {@code fill}. */
    void modify(int opcode, Layout layout, int qpn, int optMask, Consumer<Struct> fill) {
        Struct s = cmd(layout, opcode).set("qpn", qpn);
        if (layout.hasField("opt_param_mask")) {
            s.set("opt_param_mask", optMask);
        }
        fill.accept(s);
        run(s, outputOf(opcode));
    }

    static Layout outputOf(int opcode) {
        return io.jhca.mlx5.cmd.DriverCmdLayouts.output(opcode);
    }

    int queryQpState(int qpn) {
        return (int) run(cmd(QpLayouts.QUERY_QP_IN, CmdOpcode.QUERY_QP).set("qpn", qpn), QpLayouts.QUERY_QP_OUT)
                .get("qpc.state");
    }

    @Override
    public void close() {
        fn.close();
    }
}
