package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.CommandException;
import io.jhca.mlx5.cmd.CommandTimeoutException;
import io.jhca.mlx5.cmd.EqLayouts;
import io.jhca.mlx5.cmd.HcaCap;
import io.jhca.mlx5.cmd.HcaLayouts;
import io.jhca.mlx5.cmd.InitSegment;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QCounterLayouts;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.RoceAddressLayouts;
import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.init.AsyncEq;
import io.jhca.mlx5.testdev.ScriptedFirmware;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.VerbsException;

/**
 * The bring-up against scripted firmware: the exact command order of rdma-core's mlx5_vfio.c, the init segment
 * handshake (queue address high then low, waiting for 'initializing' twice), what the commands carry, the teardown in
 * reverse, and failures (a command error, a command timeout, firmware that never initializes) surfacing as clear
 * exceptions with the steps done so far undone.
 */
class BringUpTest {

    private static final List<String> BRING_UP = List.of("ENABLE_HCA", "QUERY_ISSI", "SET_ISSI", "QUERY_PAGES",
            "MANAGE_PAGES", "QUERY_HCA_CAP", "QUERY_PAGES", "MANAGE_PAGES", "INIT_HCA", "ALLOC_UAR", "CREATE_EQ",
            "SET_ROCE_ADDRESS", "SET_ROCE_ADDRESS");
    private static final List<String> TEARDOWN = List.of("DESTROY_EQ", "DEALLOC_UAR", "TEARDOWN_HCA", "MANAGE_PAGES",
            "DISABLE_HCA");

    @Test
    void commandOrderAndReverseTeardown() {
        ScriptedFirmware fw = Fixtures.firmware();
        fw.initializingMillis = 100;
        fw.start();
        Mlx5Context ctx = Fixtures.open(fw);
        assertEquals(BRING_UP, fw.commandNames());
        // op_mods: pages boot then init, caps general/current, SET_ISSI 1, give 3 then 2 pages
        List<ScriptedFirmware.Seen> qp = fw.commands(CmdOpcode.QUERY_PAGES);
        assertEquals(HcaLayouts.PAGES_BOOT, qp.get(0).opMod());
        assertEquals(HcaLayouts.PAGES_INIT, qp.get(1).opMod());
        assertEquals(HcaCap.opMod(HcaCap.TYPE_GENERAL, HcaCap.MODE_CURRENT), fw.commands(CmdOpcode.QUERY_HCA_CAP).get(0).opMod());
        assertEquals(1, fw.commands(CmdOpcode.SET_ISSI).get(0).get(HcaLayouts.SET_ISSI_IN, "current_issi"));
        List<ScriptedFirmware.Seen> mp = fw.commands(CmdOpcode.MANAGE_PAGES);
        assertEquals(HcaLayouts.PAGES_GIVE, mp.get(0).opMod());
        assertEquals(3, mp.get(0).get(HcaLayouts.MANAGE_PAGES_IN, "input_num_entries"));
        assertEquals(2, mp.get(1).get(HcaLayouts.MANAGE_PAGES_IN, "input_num_entries"));
        assertEquals(5, fw.pagesHeld());
        assertEquals(5, ctx.hca().pagesGiven());
        // the first command only after 'initializing' cleared (after the queue address was written)
        assertTrue(fw.readyAt() != 0 && fw.seen.get(0).at() > fw.readyAt(), "ENABLE_HCA before the firmware was ready");
        // cmdq_addr_h written before cmdq_addr_l_sz, address 4 KiB aligned
        int hi = -1;
        int lo = -1;
        for (int i = 0; i < fw.stores.size(); i++) {
            ScriptedFirmware.Store s = fw.stores.get(i);
            if (s.offset() == InitSegment.CMDQ_ADDR_H && hi < 0) {
                hi = i;
            }
            if (s.offset() == InitSegment.CMDQ_ADDR_L_SZ && lo < 0) {
                lo = i;
                assertEquals(0, s.value() & 0xfff, "low word: 4 KiB aligned, nic_interface 0");
            }
        }
        assertTrue(hi >= 0 && lo > hi, "cmdq_addr_h (store " + hi + ") before cmdq_addr_l_sz (store " + lo + ")");

        ScriptedFirmware.Seen eq = fw.commands(CmdOpcode.CREATE_EQ).get(0);
        assertEquals(8, eq.get(EqLayouts.CREATE_EQ_IN, "eq_context_entry.log_eq_size"));
        assertEquals(1, eq.get(EqLayouts.CREATE_EQ_IN, "eq_context_entry.uar_page"));
        assertEquals(AsyncEq.EVENT_MASK, EqLayouts.CREATE_EQ_IN.field("event_bitmask").getElement(eq.in(), 0, 0));
        assertEquals(256 * Eqe.SIZE / 4096 * 8 + EqLayouts.CREATE_EQ_IN.sizeBytes(), eq.input().length);

        List<ScriptedFirmware.Seen> roce = fw.commands(CmdOpcode.SET_ROCE_ADDRESS);
        checkRoce(roce.get(0), 0, "fe8000000000000000007ffffe000003", RoceAddressLayouts.L3_TYPE_IPV6);
        checkRoce(roce.get(1), 1, "00000000000000000000ffff7f000003", RoceAddressLayouts.L3_TYPE_IPV4);

        DeviceAttributes d = ctx.queryDevice();
        assertEquals("16.35.2000", d.fwVer());
        assertEquals(1 << 18, d.maxQp());
        assertEquals((1 << 22) - 1, d.maxCqe());
        assertEquals(1 << 4, d.maxQpRdAtom());
        assertEquals(0x00007ffffe000003L, d.nodeGuid());
        assertEquals(d.nodeGuid(), ctx.device().nodeGuid(), "the context's device carries the GUID learned at bring-up");
        assertEquals(Gid.parse("00000000000000000000ffff7f000003"), ctx.queryGid(1, 1));
        assertEquals(Gid.parse("fe8000000000000000007ffffe000003"), ctx.queryGid(1, 0));

        int before = fw.seen.size();
        ctx.close();
        assertEquals(TEARDOWN, fw.commandNames().subList(before, fw.seen.size()));
        assertEquals(HcaLayouts.PAGES_TAKE, fw.commands(CmdOpcode.MANAGE_PAGES).get(2).opMod());
        assertEquals(0, fw.pagesHeld(), "every page reclaimed");
        assertTrue(fw.closed, "the function is closed with the context");
    }

    @Test
    void qCounterAllocatedJoinedAtRst2initQueriedAndFreed() {
        ScriptedFirmware fw = Fixtures.firmware();
        fw.capEditor = o -> HcaCap.CMD_HCA_CAP.set(o, 0x10, "max_qp_cnt", 4);
        fw.start();
        Mlx5Context ctx = Fixtures.open(fw);
        List<String> up = new ArrayList<>(BRING_UP);
        up.add("ALLOC_Q_COUNTER"); // mlx5_ib allocates its counters once the core is up
        assertEquals(up, fw.commandNames());
        assertEquals(ScriptedFirmware.Q_COUNTER_SET, ctx.hca().qCounter());

        java.util.Map<String, Long> stats = ctx.statistics();
        assertEquals(QCounterLayouts.COUNTERS, new ArrayList<>(stats.keySet()), "every counter, in header order");
        assertEquals(3L, stats.get("rx_write_requests"));
        assertEquals(0xfffffffeL, stats.get("out_of_sequence"), "32 bits, unsigned");
        assertEquals(0L, stats.get("local_ack_timeout_err"));
        ScriptedFirmware.Seen q = fw.commands(CmdOpcode.QUERY_Q_COUNTER).get(0);
        assertEquals(ScriptedFirmware.Q_COUNTER_SET, q.get(QCounterLayouts.QUERY_Q_COUNTER_IN, "counter_set_id"));
        assertEquals(0, q.get(QCounterLayouts.QUERY_Q_COUNTER_IN, "clear"), "reading does not clear");

        try (ProtectionDomain pd = ctx.allocatePd(); CompletionQueue cq = ctx.createCq(16);
             QueuePair qp = pd.createQp(QpInitAttributes.rc(cq, cq))) {
            qp.modify(QpAttributes.toInit(1));
            ScriptedFirmware.Seen init = fw.commands(CmdOpcode.RST2INIT_QP).get(0);
            assertEquals(ScriptedFirmware.Q_COUNTER_SET, init.get(QpLayouts.RST2INIT_QP_IN, "qpc.counter_set_id"));
        }

        int before = fw.seen.size();
        ctx.close();
        List<String> down = new ArrayList<>();
        down.add("DEALLOC_Q_COUNTER");
        down.addAll(TEARDOWN);
        assertEquals(down, fw.commandNames().subList(before, fw.seen.size()));
        assertEquals(ScriptedFirmware.Q_COUNTER_SET, fw.commands(CmdOpcode.DEALLOC_Q_COUNTER).get(0)
                .get(QCounterLayouts.DEALLOC_Q_COUNTER_IN, "counter_set_id"));
    }

    @Test
    void noQCounterWithoutMaxQpCnt() {
        ScriptedFirmware fw = Fixtures.firmware().start();
        try (Mlx5Context ctx = Fixtures.open(fw)) {
            assertEquals(-1, ctx.hca().qCounter());
            assertTrue(ctx.statistics().isEmpty(), "no counters to report");
            assertTrue(fw.commands(CmdOpcode.ALLOC_Q_COUNTER).isEmpty());
        }
    }

    private static void checkRoce(ScriptedFirmware.Seen s, int index, String gid, int l3) {
        assertEquals(index, s.get(RoceAddressLayouts.SET_ROCE_ADDRESS_IN, "roce_address_index"));
        byte[] g = new byte[16];
        RoceAddressLayouts.SET_ROCE_ADDRESS_IN.field("roce_address.source_l3_address").getBytes(s.in(), 0, g);
        assertEquals(gid, HexFormat.of().formatHex(g));
        assertEquals(0x02007f000003L, s.get(RoceAddressLayouts.SET_ROCE_ADDRESS_IN, "roce_address.source_mac"));
        assertEquals(l3, s.get(RoceAddressLayouts.SET_ROCE_ADDRESS_IN, "roce_address.roce_l3_type"));
        assertEquals(RoceAddressLayouts.ROCE_VERSION_2, s.get(RoceAddressLayouts.SET_ROCE_ADDRESS_IN, "roce_address.roce_version"));
    }

    @Test
    void commandErrorIsAClearExceptionAndTheDoneStepsAreUndone() {
        ScriptedFirmware fw = Fixtures.firmware().start();
        fw.fail(CmdOpcode.INIT_HCA, CmdStatus.BAD_PARAM_ERR, 0x1234abcd);
        VerbsException e = assertThrows(VerbsException.class, () -> Fixtures.open(fw));
        CommandException c = assertInstanceOf(CommandException.class, e.getCause());
        assertEquals(CmdOpcode.INIT_HCA, c.opcode());
        assertEquals(CmdStatus.BAD_PARAM_ERR, c.cmdStatus());
        assertEquals(0x1234abcd, c.syndrome());
        assertTrue(e.getMessage().contains("INIT_HCA") && e.getMessage().contains("bad parameter")
                && e.getMessage().contains("0x1234abcd"), e.getMessage());
        List<String> names = fw.commandNames();
        assertEquals(List.of("INIT_HCA", "MANAGE_PAGES", "DISABLE_HCA"), names.subList(names.indexOf("INIT_HCA"), names.size()));
        assertEquals(0, fw.pagesHeld());
        assertTrue(fw.closed);
    }

    @Test
    void commandTimeoutIsAClearExceptionAndNoFurtherCommandIsSent() {
        ScriptedFirmware fw = Fixtures.firmware().start();
        fw.hang(CmdOpcode.QUERY_HCA_CAP);
        VerbsException e = assertThrows(VerbsException.class,
                () -> Fixtures.open(fw, Fixtures.OPTIONS.withCommandTimeout(300)));
        CommandTimeoutException t = assertInstanceOf(CommandTimeoutException.class, e.getCause());
        assertEquals(CmdOpcode.QUERY_HCA_CAP, t.opcode());
        assertEquals(VerbsException.ETIMEDOUT, e.errno());
        assertTrue(e.getMessage().contains("QUERY_HCA_CAP") && e.getMessage().contains("timeout"), e.getMessage());
        List<String> names = fw.commandNames();
        assertEquals("QUERY_HCA_CAP", names.get(names.size() - 1), "no teardown command after a timeout: " + names);
    }

    @Test
    void firmwareThatNeverInitializes() {
        ScriptedFirmware fw = Fixtures.firmware();
        fw.neverReady = true;
        fw.start();
        VerbsException e = assertThrows(VerbsException.class,
                () -> Fixtures.open(fw, Fixtures.OPTIONS.withInitTimeouts(200, 200)));
        assertInstanceOf(IllegalStateException.class, e.getCause());
        assertTrue(e.getMessage().contains("initializing"), e.getMessage());
        assertTrue(fw.seen.isEmpty());
    }

    @Test
    void commandTraceSwitchesAtRunTime() {
        ScriptedFirmware fw = Fixtures.firmware().start();
        List<String> lines = new ArrayList<>();
        Mlx5Context ctx = Fixtures.open(fw, Fixtures.OPTIONS.withTrace(lines::add));
        int atOpen = lines.size();
        assertTrue(atOpen > 0 && String.join("\n", lines).contains("CREATE_EQ"), "bring-up traced");
        ctx.traceCommands(null);
        ctx.allocatePd().close();
        assertEquals(atOpen, lines.size(), "trace off");
        List<String> again = new ArrayList<>();
        ctx.traceCommands(again::add);
        ctx.allocatePd().close();
        assertTrue(String.join("\n", again).contains("ALLOC_PD"), "trace back on: " + again.size() + " lines");
        ctx.close();
    }

    @Test
    void pageRequestEventsAreServed() throws Exception {
        ScriptedFirmware fw = Fixtures.firmware().start();
        try (Mlx5Context ctx = Fixtures.open(fw)) {
            int before = fw.pagesHeld();
            fw.postEqe(b -> Eqe.setPageRequest(b, 0, 0, 4));
            long deadline = System.nanoTime() + 5_000_000_000L;
            while (fw.pagesHeld() < before + 4 && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertEquals(before + 4, fw.pagesHeld());
            assertEquals(before + 4, ctx.hca().pagesGiven());
        }
    }

    @Test
    void providerListsAndOpensFunctionsOfEverySource() {
        assertTrue(new Mlx5Provider().devices().stream().anyMatch(d -> d.name().equals("scripted_0")
                && d.provider().equals("mlx5")));
        try (io.jhca.verbs.Context ctx = Verbs.open("scripted_0")) {
            assertInstanceOf(Mlx5Context.class, ctx);
            long guid = ctx.queryDevice().nodeGuid();
            assertTrue(new Mlx5Provider().devices().stream().anyMatch(d -> d.name().equals("scripted_0")
                    && d.nodeGuid() == guid), "listed with its GUID once opened");
            assertArrayEquals(Gid.of(java.net.InetAddress.getLoopbackAddress()).bytes(), ctx.queryGid(1, 1).bytes());
        }
    }
}
