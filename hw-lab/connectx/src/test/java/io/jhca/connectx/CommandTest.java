package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CmdQueue;
import io.jhca.mlx5.cmd.CmdQueueOptions;
import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.CommandException;
import io.jhca.mlx5.cmd.CqLayouts;
import io.jhca.mlx5.cmd.HcaCap;
import io.jhca.mlx5.cmd.HcaLayouts;
import io.jhca.mlx5.cmd.InitSegment;
import io.jhca.mlx5.cmd.Layout;
import io.jhca.mlx5.cmd.MkeyLayouts;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.QueryRoceAddressLayouts;
import io.jhca.mlx5.init.FunctionCmdMemory;
import io.jhca.mlx5.cmd.Struct;
import io.jhca.mlx5.cmd.UarPdLayouts;
import io.jhca.verbs.Gid;

/**
 * The model's firmware driven through the cmd package's host-side {@link CmdQueue}: the initialization segment at
 * power-on and after the queue address is written, the bring-up sequence, the capabilities, the RoCE address table,
 * QP states through QUERY_QP, and the status and syndrome of every kind of bad command.
 */
class CommandTest {

    private static final String IP = "127.0.0.31";

    private HostDriver drv;

    @AfterEach
    void close() {
        if (drv != null) {
            drv.close();
        }
    }

    private static void refused(CommandException e, CmdStatus status, int syndrome) {
        assertEquals(status.value(), e.status(), e.getMessage());
        assertEquals(syndrome, e.syndrome(), String.format("syndrome 0x%x (%s)", e.syndrome(), e.getMessage()));
    }

    @Test
    void initSegmentAtPowerOnAndAfterTheQueueAddress() throws Exception {
        drv = HostDriver.open("cmd0", IP, 60_000); // a long pre-init: only the address write ends it here
        InitSegment iseg = drv.iseg;
        assertEquals(16, iseg.fwRevMajor());
        assertEquals(35, iseg.fwRevMinor());
        assertEquals(2000, iseg.fwRevSubminor());
        assertEquals("16.35.2000", iseg.fwVersion());
        assertEquals(InitSegment.CMDIF_REV, iseg.cmdifRev());
        assertEquals(5, iseg.logCmdqSize());
        assertEquals(6, iseg.logCmdqStride());
        assertTrue(iseg.initializing(), "initializing must be set at power-on");
        assertEquals(0, iseg.healthSyndrome());
        int h0 = iseg.healthCounter();
        long t0 = iseg.internalTimer();

        drv.cmdq = CmdQueue.open(iseg, new FunctionCmdMemory(drv.fn), CmdQueueOptions.defaults().timeoutMillis(20_000));
        assertTrue(iseg.awaitInitialized(5_000), "initializing must clear once cmdq_phy_addr is written");
        assertEquals(drv.cmdq.queueIova(), drv.fn.model().commandQueueIova());
        // the size fields stay readable after the address write (they are read-only in the register)
        assertEquals(5, iseg.logCmdqSize());
        assertEquals(6, iseg.logCmdqStride());
        assertEquals(drv.cmdq.queueIova(), iseg.cmdqAddress());
        Thread.sleep(50);
        assertTrue(iseg.healthCounter() != h0, "health_counter must keep changing");
        assertTrue(iseg.internalTimer() != t0, "the internal timer must run");
        drv.enableHca();
    }

    @Test
    void preInitEndsOnItsOwnForDriversThatWaitFirst() throws Exception {
        drv = HostDriver.open("cmd0", IP, 20);
        assertTrue(drv.iseg.awaitInitialized(5_000), "kernel-style drivers wait for pre-init before programming");
        drv.openCommandQueue();
        drv.enableHca();
    }

    @Test
    void aCommandWhoseDoorbellWasLostStillRuns() throws Exception {
        drv = HostDriver.open("cmd0", IP);
        assertTrue(drv.iseg.awaitInitialized(5_000));
        // a BAR0 view that drops every cmd_dbell write, as when two threads' doorbells overwrite each other
        InitSegment deaf = new InitSegment(new io.jhca.doorbell.MmioWindow(drv.bar0.address(), drv.bar0.length()) {
            @Override
            protected void store32(int offset, int deviceOrder) {
                if (offset != InitSegment.CMD_DBELL) {
                    super.store32(offset, deviceOrder);
                }
            }
        });
        drv.cmdq = CmdQueue.open(deaf, new FunctionCmdMemory(drv.fn),
                CmdQueueOptions.defaults().timeoutMillis(10_000));
        assertTrue(drv.iseg.awaitInitialized(5_000));
        drv.enableHca(); // owned by the device, never rung: found by the ownership scan
        assertTrue(drv.counters().get(ModelCounters.Counter.CMD_DOORBELLS_RECOVERED) >= 1);
        assertEquals(0, drv.counters().get(ModelCounters.Counter.CMD_DOORBELLS));
    }

    /**
     * After DISABLE_HCA the driver frees the queue's page, and its memory may hold anything a moment later. The model
     * must not run what it finds there: a slot that looks device-owned without a doorbell is no command. (With IOVA =
     * guest-physical address and no IOMMU between the model and guest RAM, running it wrote "outputs" into whatever
     * the guest had put in those pages since: a guest JVM died of it about one run in twenty.)
     */
    @Test
    void aDisabledFunctionDoesNotRunStaleSlotsOfItsQueue() throws Exception {
        drv = HostDriver.open("cmd0", IP);
        drv.openCommandQueue();
        drv.enableHca();
        drv.run(drv.cmd(HcaLayouts.DISABLE_HCA_IN, CmdOpcode.DISABLE_HCA), HcaLayouts.DISABLE_HCA_OUT);
        long commands = drv.counters().get(ModelCounters.Counter.COMMANDS);
        int stride = 1 << drv.cmdq.logStride();
        long host = drv.fn.model().hostAddress(drv.cmdq.queueIova(), (long) drv.cmdq.slots() * stride);
        assertTrue(host > 0, "the queue page is mapped");
        org.agrona.concurrent.UnsafeBuffer page = new org.agrona.concurrent.UnsafeBuffer(host,
                drv.cmdq.slots() * stride);
        byte[] garbage = new byte[page.capacity()];
        new java.util.Random(7).nextBytes(garbage);
        for (int s = 0; s < drv.cmdq.slots(); s++) {
            garbage[s * stride + io.jhca.mlx5.cmd.CmdQueueEntry.SIZE - 1] |= 1; // status_own: "owned by hardware"
        }
        page.putBytes(0, garbage);
        Thread.sleep(3 * InitSegmentDevice.LOST_DOORBELL_NANOS / 1_000_000 + 20);
        byte[] after = new byte[garbage.length];
        page.getBytes(0, after);
        assertArrayEquals(garbage, after, "the model wrote into the freed queue page");
        assertEquals(commands, drv.counters().get(ModelCounters.Counter.COMMANDS));
        assertEquals(0, drv.counters().get(ModelCounters.Counter.CMD_DOORBELLS_RECOVERED));
        // a doorbell on the same queue (a reload, as mlx5_core does it) makes it live again
        page.setMemory(0, page.capacity(), (byte) 0);
        drv.enableHca();
    }

    @Test
    void bringUpSequenceAndCapabilities() throws Exception {
        drv = HostDriver.open("cmd0", IP);
        drv.openCommandQueue();
        drv.enableHca();
        Struct issi = drv.run(drv.cmd(HcaLayouts.QUERY_ISSI_IN, CmdOpcode.QUERY_ISSI), HcaLayouts.QUERY_ISSI_OUT);
        assertEquals(0, issi.get("current_issi"));
        assertEquals(0b11, issi.get("supported_issi_dw0") & 0b11, "ISSI 1 must be supported (rdma-core requires it)");
        drv.run(drv.cmd(HcaLayouts.SET_ISSI_IN, CmdOpcode.SET_ISSI).set("current_issi", 1), HcaLayouts.SET_ISSI_OUT);
        issi = drv.run(drv.cmd(HcaLayouts.QUERY_ISSI_IN, CmdOpcode.QUERY_ISSI), HcaLayouts.QUERY_ISSI_OUT);
        assertEquals(1, issi.get("current_issi"));

        assertEquals(Firmware.BOOT_PAGES, drv.queryPages(HcaLayouts.PAGES_BOOT));
        refused(drv.refused(capsCommand(), HcaLayouts.QUERY_HCA_CAP_OUT), CmdStatus.BAD_SYS_STATE_ERR,
                CmdSyndromes.PAGES_MISSING);
        drv.givePages(Firmware.BOOT_PAGES);
        assertEquals(0, drv.queryPages(HcaLayouts.PAGES_BOOT));

        Struct caps = drv.queryCaps();
        String c = "capability.cmd_hca_cap.";
        assertEquals(ModelCaps.LOG_MAX_QP, caps.get(c + "log_max_qp"));
        assertEquals(ModelCaps.LOG_MAX_QP_SZ, caps.get(c + "log_max_qp_sz"));
        assertEquals(ModelCaps.LOG_MAX_CQ, caps.get(c + "log_max_cq"));
        assertEquals(ModelCaps.LOG_MAX_CQ_SZ, caps.get(c + "log_max_cq_sz"));
        assertEquals(9, caps.get(c + "log_bf_reg_size"));
        assertEquals(1, caps.get(c + "bf"));
        assertEquals(ModelCaps.LOG_MAX_RA_REQ_QP, caps.get(c + "log_max_ra_req_qp"));
        assertEquals(ModelCaps.LOG_MAX_RA_RES_QP, caps.get(c + "log_max_ra_res_qp"));
        assertEquals(HcaCap.PORT_TYPE_ETH, caps.get(c + "port_type"));
        assertEquals(1, caps.get(c + "num_ports"));
        assertEquals(1, caps.get(c + "roce"));
        assertEquals(1, caps.get(c + "rc"));
        assertEquals(1, caps.get(c + "ud"));
        assertEquals(0, caps.get(c + "xrc"));
        assertEquals(1, caps.get(c + "cqe_version"));
        assertEquals(0, caps.get(c + "cmdif_checksum"));
        assertEquals(1, caps.get(c + "gid_table_size"), "16 entries, encoded as log2(n / 8)");
        // the atomic and RoCE capability pages mlx5_core reads when atomic / roce are set
        drv.run(drv.cmd(HcaLayouts.QUERY_HCA_CAP_IN, HcaLayouts.QUERY_HCA_CAP_IN.sizeBytes(), CmdOpcode.QUERY_HCA_CAP,
                HcaCap.opMod(HcaCap.TYPE_ATOMIC, HcaCap.MODE_CURRENT)), HcaLayouts.QUERY_HCA_CAP_OUT);
        assertEquals(0x3, ModelCaps.ATOMIC_CAPS.get(drv.out, 0x10, "atomic_operations"));
        assertEquals(0x8, ModelCaps.ATOMIC_CAPS.get(drv.out, 0x10, "atomic_size_qp"));
        assertEquals(1, ModelCaps.ATOMIC_CAPS.get(drv.out, 0x10, "atomic_req_8B_endianness_mode"));
        drv.run(drv.cmd(HcaLayouts.QUERY_HCA_CAP_IN, HcaLayouts.QUERY_HCA_CAP_IN.sizeBytes(), CmdOpcode.QUERY_HCA_CAP,
                HcaCap.opMod(HcaCap.TYPE_ROCE, HcaCap.MODE_MAX)), HcaLayouts.QUERY_HCA_CAP_OUT);
        assertEquals(1 << 2, ModelCaps.ROCE_CAP.get(drv.out, 0x10, "roce_version"), "MLX5_ROCE_VERSION_2_CAP");
        assertEquals(4791, ModelCaps.ROCE_CAP.get(drv.out, 0x10, "r_roce_dest_udp_port"));
        assertEquals(ModelCaps.GID_TABLE_ENTRIES, ModelCaps.ROCE_CAP.get(drv.out, 0x10, "roce_address_table_size"));
        refused(drv.refused(drv.cmd(HcaLayouts.QUERY_HCA_CAP_IN, HcaLayouts.QUERY_HCA_CAP_IN.sizeBytes(),
                CmdOpcode.QUERY_HCA_CAP, HcaCap.opMod(HcaCap.TYPE_ODP, HcaCap.MODE_MAX)), HcaLayouts.QUERY_HCA_CAP_OUT),
                CmdStatus.BAD_PARAM_ERR, CmdSyndromes.BAD_CAP_TYPE);

        assertEquals(Firmware.INIT_PAGES, drv.queryPages(HcaLayouts.PAGES_INIT));
        refused(drv.refused(drv.cmd(HcaLayouts.INIT_HCA_IN, CmdOpcode.INIT_HCA), HcaLayouts.INIT_HCA_OUT),
                CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.PAGES_MISSING);
        drv.givePages(Firmware.INIT_PAGES);
        drv.run(drv.cmd(HcaLayouts.INIT_HCA_IN, CmdOpcode.INIT_HCA), HcaLayouts.INIT_HCA_OUT);
        assertTrue(drv.fn.model().initialized());
        assertEquals(Firmware.BOOT_PAGES + Firmware.INIT_PAGES, drv.fn.model().firmwarePages());
        assertEquals(0, drv.queryPages(HcaLayouts.PAGES_REGULAR));

        int uar = (int) drv.run(drv.cmd(UarPdLayouts.ALLOC_UAR_IN, CmdOpcode.ALLOC_UAR), UarPdLayouts.ALLOC_UAR_OUT)
                .get("uar");
        assertEquals(1, uar, "UAR page 0 is the initialization segment");

        // teardown: objects go, pages come back, the function can be disabled
        drv.run(drv.cmd(HcaLayouts.TEARDOWN_HCA_IN, CmdOpcode.TEARDOWN_HCA), HcaLayouts.TEARDOWN_HCA_OUT);
        assertFalse(drv.fn.model().initialized());
        refused(drv.refused(drv.cmd(UarPdLayouts.ALLOC_PD_IN, CmdOpcode.ALLOC_PD), UarPdLayouts.ALLOC_PD_OUT),
                CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.NOT_INITIALIZED);
        Layout take = HcaLayouts.MANAGE_PAGES_IN;
        Struct t = drv.run(drv.cmd(take, take.sizeBytes(), CmdOpcode.MANAGE_PAGES, HcaLayouts.PAGES_TAKE)
                .set("input_num_entries", 100), HcaLayouts.MANAGE_PAGES_OUT, HcaLayouts.MANAGE_PAGES_OUT.sizeBytes(100));
        assertEquals(Firmware.BOOT_PAGES + Firmware.INIT_PAGES, t.get("output_num_entries"));
        assertEquals(0, drv.fn.model().firmwarePages());
        drv.run(drv.cmd(HcaLayouts.DISABLE_HCA_IN, CmdOpcode.DISABLE_HCA), HcaLayouts.DISABLE_HCA_OUT);
    }

    private Struct capsCommand() {
        return drv.cmd(HcaLayouts.QUERY_HCA_CAP_IN, HcaLayouts.QUERY_HCA_CAP_IN.sizeBytes(), CmdOpcode.QUERY_HCA_CAP,
                HcaCap.opMod(HcaCap.TYPE_GENERAL, HcaCap.MODE_MAX));
    }

    @Test
    void badCommandsBeforeInit() throws Exception {
        drv = HostDriver.open("cmd0", IP);
        drv.openCommandQueue();
        refused(drv.refused(drv.cmd(HcaLayouts.QUERY_ISSI_IN, CmdOpcode.QUERY_ISSI), HcaLayouts.QUERY_ISSI_OUT),
                CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.NOT_ENABLED);
        drv.enableHca();
        // an opcode the device does not have at all, and one it does not implement
        refused(drv.refused(drv.cmd(UarPdLayouts.ALLOC_PD_IN, UarPdLayouts.ALLOC_PD_IN.sizeBytes(), 0x7ff, 0),
                UarPdLayouts.ALLOC_PD_OUT), CmdStatus.BAD_OP_ERR, CmdSyndromes.UNKNOWN_OPCODE);
        refused(drv.refused(drv.cmd(UarPdLayouts.ALLOC_PD_IN, UarPdLayouts.ALLOC_PD_IN.sizeBytes(), CmdOpcode.CREATE_TIR,
                0), UarPdLayouts.ALLOC_PD_OUT), CmdStatus.BAD_OP_ERR, CmdSyndromes.UNKNOWN_OPCODE);
        refused(drv.refused(drv.cmd(HcaLayouts.SET_ISSI_IN, CmdOpcode.SET_ISSI).set("current_issi", 2),
                HcaLayouts.SET_ISSI_OUT), CmdStatus.BAD_PARAM_ERR, CmdSyndromes.BAD_ISSI);
        refused(drv.refused(drv.cmd(HcaLayouts.QUERY_PAGES_IN, HcaLayouts.QUERY_PAGES_IN.sizeBytes(),
                CmdOpcode.QUERY_PAGES, 7), HcaLayouts.QUERY_PAGES_OUT), CmdStatus.BAD_PARAM_ERR, CmdSyndromes.BAD_OP_MOD);
        refused(drv.refused(drv.cmd(UarPdLayouts.ALLOC_PD_IN, CmdOpcode.ALLOC_PD), UarPdLayouts.ALLOC_PD_OUT),
                CmdStatus.BAD_SYS_STATE_ERR, CmdSyndromes.NOT_INITIALIZED);

        // firmware pages must be page aligned and DMA-mapped
        Layout l = HcaLayouts.MANAGE_PAGES_IN;
        try (DmaRegion unmapped = DmaMemory.allocate(4096)) {
            refused(drv.refused(drv.cmd(l, l.sizeBytes(1), CmdOpcode.MANAGE_PAGES, HcaLayouts.PAGES_GIVE)
                    .set("input_num_entries", 1).setElement("pas", 0, unmapped.iova(0)), HcaLayouts.MANAGE_PAGES_OUT),
                    CmdStatus.BAD_PARAM_ERR, CmdSyndromes.PAGE_NOT_MAPPED);
        }
        DmaRegion page = drv.dma(8192);
        refused(drv.refused(drv.cmd(l, l.sizeBytes(1), CmdOpcode.MANAGE_PAGES, HcaLayouts.PAGES_GIVE)
                .set("input_num_entries", 1).setElement("pas", 0, page.iova(8)), HcaLayouts.MANAGE_PAGES_OUT),
                CmdStatus.BAD_PARAM_ERR, CmdSyndromes.PAGE_MISALIGNED);
        refused(drv.refused(drv.cmd(l, l.sizeBytes(2), CmdOpcode.MANAGE_PAGES, HcaLayouts.PAGES_GIVE)
                .set("input_num_entries", 2).setElement("pas", 0, page.iova(0)).setElement("pas", 1, page.iova(0)),
                HcaLayouts.MANAGE_PAGES_OUT), CmdStatus.BAD_PARAM_ERR, CmdSyndromes.PAGE_GIVEN_TWICE);
        assertEquals(0, drv.fn.model().firmwarePages(), "a refused MANAGE_PAGES keeps none of its pages");
        // a command shorter than its layout
        refused(drv.refused(drv.cmd(HcaLayouts.QUERY_PAGES_IN, 8, CmdOpcode.QUERY_PAGES, HcaLayouts.PAGES_BOOT),
                HcaLayouts.QUERY_PAGES_OUT), CmdStatus.BAD_INP_LEN_ERR, CmdSyndromes.INPUT_TOO_SHORT);
        assertTrue(drv.counters().get(ModelCounters.Counter.COMMAND_ERRORS) >= 9);
    }

    @Test
    void badObjectCommands() throws Exception {
        drv = HostDriver.open("cmd0", IP).bringUp();
        HostDriver.Cq cq = drv.createCq(4);
        Layout cc = CqLayouts.CREATE_CQ_IN;
        DmaRegion ring = drv.dma(4096);
        long[] dbr = new long[1];
        drv.dbr(dbr);
        // unknown EQ, too big, unmapped buffer, unmapped doorbell record, a CQE size the PRM does not have
        refused(drv.refused(createCq(cc, ring, dbr[0], 4).set("cq_context.c_eqn_or_apu_element", 9),
                CqLayouts.CREATE_CQ_OUT), CmdStatus.BAD_RES_ERR, CmdSyndromes.BAD_EQN);
        refused(drv.refused(createCq(cc, ring, dbr[0], 23), CqLayouts.CREATE_CQ_OUT), CmdStatus.BAD_PARAM_ERR,
                CmdSyndromes.CQ_SIZE);
        try (DmaRegion unmapped = DmaMemory.allocate(4096)) {
            refused(drv.refused(createCq(cc, ring, dbr[0], 4).setElement("pas", 0, unmapped.iova(0)),
                    CqLayouts.CREATE_CQ_OUT), CmdStatus.BAD_PARAM_ERR, CmdSyndromes.PAS_NOT_MAPPED);
            refused(drv.refused(createCq(cc, ring, unmapped.iova(0), 4), CqLayouts.CREATE_CQ_OUT),
                    CmdStatus.BAD_PARAM_ERR, CmdSyndromes.DBR_NOT_MAPPED);
            // an MTT naming unmapped memory
            refused(drv.refused(createMkey(unmapped.iova(0), MkeyLayouts.ACCESS_MODE_MTT), drv.outputOf(
                    CmdOpcode.CREATE_MKEY)), CmdStatus.BAD_PARAM_ERR, CmdSyndromes.MKEY_MTT_NOT_MAPPED);
        }
        refused(drv.refused(createCq(cc, ring, dbr[0], 4).set("cq_context.cqe_sz", 2), CqLayouts.CREATE_CQ_OUT),
                CmdStatus.BAD_PARAM_ERR, CmdSyndromes.CQE_SIZE);
        refused(drv.refused(createMkey(ring.iova(0), MkeyLayouts.ACCESS_MODE_PA), drv.outputOf(CmdOpcode.CREATE_MKEY)),
                CmdStatus.BAD_PARAM_ERR, CmdSyndromes.MKEY_ACCESS_MODE);
        refused(drv.refused(drv.cmd(CqLayouts.DESTROY_CQ_IN, CmdOpcode.DESTROY_CQ).set("cqn", 77),
                CqLayouts.DESTROY_CQ_OUT), CmdStatus.BAD_RES_ERR, CmdSyndromes.BAD_CQN);
        refused(drv.refused(drv.cmd(UarPdLayouts.DEALLOC_UAR_IN, CmdOpcode.DEALLOC_UAR).set("uar", 0),
                UarPdLayouts.DEALLOC_UAR_OUT), CmdStatus.BAD_RES_ERR, CmdSyndromes.BAD_UAR);

        DriverRings qp = drv.createQp(QpLayouts.ST_RC, cq, cq, 4, 4, 0);
        // a CQ in use, and a PD with a QP, cannot go
        refused(drv.refused(drv.cmd(CqLayouts.DESTROY_CQ_IN, CmdOpcode.DESTROY_CQ).set("cqn", cq.cqn),
                CqLayouts.DESTROY_CQ_OUT), CmdStatus.RES_BUSY, CmdSyndromes.OBJECT_IN_USE);
        refused(drv.refused(drv.cmd(UarPdLayouts.DEALLOC_PD_IN, CmdOpcode.DEALLOC_PD).set("pd", drv.pd),
                UarPdLayouts.DEALLOC_PD_OUT), CmdStatus.RES_BUSY, CmdSyndromes.OBJECT_IN_USE);
        // QP types the model does not have, unknown PD
        Layout cq2 = QpLayouts.CREATE_QP_IN;
        refused(drv.refused(drv.cmd(cq2, CmdOpcode.CREATE_QP).set("qpc.st", QpLayouts.ST_XRC), QpLayouts.CREATE_QP_OUT),
                CmdStatus.BAD_PARAM_ERR, CmdSyndromes.QP_TYPE);
        refused(drv.refused(drv.cmd(cq2, CmdOpcode.CREATE_QP).set("qpc.pd", 999), QpLayouts.CREATE_QP_OUT),
                CmdStatus.BAD_RES_ERR, CmdSyndromes.BAD_PD);

        // QP state machine: a transition from the wrong state, QUERY_QP along the way
        assertEquals(QpLayouts.STATE_RST, drv.queryQpState(qp.qpn));
        CommandException e = assertThrowsCommand(() -> qp.toRtr(0x11, 0, InetAddress.getByName("127.0.0.9"), 3));
        refused(e, CmdStatus.BAD_QP_STATE_ERR, CmdSyndromes.QP_BAD_STATE);
        qp.toInit(true, true, false);
        assertEquals(QpLayouts.STATE_INIT, drv.queryQpState(qp.qpn));
        refused(assertThrowsCommand(() -> qp.toRts(0)), CmdStatus.BAD_QP_STATE_ERR, CmdSyndromes.QP_BAD_STATE);
        // INIT2RTR through a GID entry nobody programmed
        byte[] peerGid = Gid.of(InetAddress.getByName("127.0.0.9")).bytes();
        e = assertThrowsCommand(() -> drv.modify(CmdOpcode.INIT2RTR_QP, QpLayouts.INIT2RTR_QP_IN, qp.qpn, 0, s -> s
                .set("qpc.mtu", 3).set("qpc.remote_qpn", 0x11)
                .setBytes("qpc.primary_address_path.rgid_rip", peerGid)
                .set("qpc.primary_address_path.src_addr_index", 5)));
        refused(e, CmdStatus.BAD_PARAM_ERR, CmdSyndromes.QP_BAD_GID_INDEX);
        qp.toRtr(0x11, 0, InetAddress.getByName("127.0.0.9"), 3);
        qp.toRts(0);
        Struct q = drv.run(drv.cmd(QpLayouts.QUERY_QP_IN, CmdOpcode.QUERY_QP).set("qpn", qp.qpn), QpLayouts.QUERY_QP_OUT);
        assertEquals(QpLayouts.STATE_RTS, q.get("qpc.state"));
        assertEquals(0x11, q.get("qpc.remote_qpn"));
        assertEquals(3, q.get("qpc.mtu"));
        assertEquals(drv.pd, q.get("qpc.pd"));
        assertEquals(0x1234, q.get("qpc.user_index"));
        assertEquals(14, q.get("qpc.primary_address_path.ack_timeout"));
        qp.toErr();
        assertEquals(QpLayouts.STATE_ERR, drv.queryQpState(qp.qpn));
        qp.toRst();
        assertEquals(QpLayouts.STATE_RST, drv.queryQpState(qp.qpn));
        drv.run(drv.cmd(QpLayouts.DESTROY_QP_IN, CmdOpcode.DESTROY_QP).set("qpn", qp.qpn), QpLayouts.DESTROY_QP_OUT);
        refused(drv.refused(drv.cmd(QpLayouts.QUERY_QP_IN, CmdOpcode.QUERY_QP).set("qpn", qp.qpn),
                QpLayouts.QUERY_QP_OUT), CmdStatus.BAD_RES_ERR, CmdSyndromes.BAD_QPN);
        drv.run(drv.cmd(CqLayouts.DESTROY_CQ_IN, CmdOpcode.DESTROY_CQ).set("cqn", cq.cqn), CqLayouts.DESTROY_CQ_OUT);
    }

    @Test
    void roceAddressTable() throws Exception {
        drv = HostDriver.open("cmd0", IP).bringUp();
        InetAddress other = InetAddress.getByName("127.0.0.99");
        drv.setGid(3, other);
        Struct q = drv.run(drv.cmd(QueryRoceAddressLayouts.QUERY_ROCE_ADDRESS_IN, CmdOpcode.QUERY_ROCE_ADDRESS)
                .set("roce_address_index", 3), QueryRoceAddressLayouts.QUERY_ROCE_ADDRESS_OUT);
        byte[] got = new byte[16];
        QueryRoceAddressLayouts.QUERY_ROCE_ADDRESS_OUT.field("roce_address.source_l3_address").getBytes(drv.out, 0, got);
        assertArrayEquals(Gid.of(other).bytes(), got);
        assertEquals(2, q.get("roce_address.roce_version"));
        assertEquals(0, q.get("roce_address.roce_l3_type"));
        CommandException e = drv.refused(drv.cmd(io.jhca.mlx5.cmd.RoceAddressLayouts.SET_ROCE_ADDRESS_IN,
                CmdOpcode.SET_ROCE_ADDRESS).set("roce_address_index", ModelCaps.GID_TABLE_ENTRIES),
                io.jhca.mlx5.cmd.RoceAddressLayouts.SET_ROCE_ADDRESS_OUT);
        refused(e, CmdStatus.BAD_PARAM_ERR, CmdSyndromes.GID_INDEX);
        e = drv.refused(drv.cmd(io.jhca.mlx5.cmd.RoceAddressLayouts.SET_ROCE_ADDRESS_IN, CmdOpcode.SET_ROCE_ADDRESS)
                .set("roce_address_index", 4).setBytes("roce_address.source_l3_address", Gid.of(other).bytes())
                .set("roce_address.roce_version", 0), io.jhca.mlx5.cmd.RoceAddressLayouts.SET_ROCE_ADDRESS_OUT);
        refused(e, CmdStatus.BAD_PARAM_ERR, CmdSyndromes.GID_VERSION);
    }

    private Struct createCq(Layout l, DmaRegion ring, long dbr, int logSize) {
        return drv.cmd(l, l.sizeBytes(1), CmdOpcode.CREATE_CQ, 0)
                .set("cq_context.log_cq_size", logSize)
                .set("cq_context.uar_page", drv.uar)
                .set("cq_context.c_eqn_or_apu_element", drv.eqn)
                .set("cq_context.dbr_addr", dbr)
                .setElement("pas", 0, ring.iova(0));
    }

    private Struct createMkey(long page, int mode) {
        Layout l = MkeyLayouts.CREATE_MKEY_IN;
        String m = "memory_key_mkey_entry.";
        return drv.cmd(l, MkeyLayouts.createMkeyInLength(1), CmdOpcode.CREATE_MKEY, 0)
                .set(m + "access_mode_1_0", mode)
                .set(m + "lr", 1)
                .set(m + "pd", drv.pd)
                .set(m + "start_addr", page)
                .set(m + "len", 4096)
                .set(m + "translations_octword_size", 1)
                .set(m + "log_page_size", 12)
                .setElement("klm_pas_mtt", 0, MkeyLayouts.mttEntry(page, MkeyLayouts.MTT_PERM_RW));
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static CommandException assertThrowsCommand(ThrowingRunnable r) throws Exception {
        try {
            r.run();
        } catch (CommandException e) {
            return e;
        }
        throw new AssertionError("the command succeeded; expected a refusal");
    }
}
