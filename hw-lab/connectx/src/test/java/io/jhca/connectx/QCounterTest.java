package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.LinkedHashMap;
import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.CmdStatus;
import io.jhca.mlx5.cmd.CommandException;
import io.jhca.mlx5.cmd.QCounterLayouts;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.Struct;
import io.jhca.mlx5.wqe.FmCeSe;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * The model's Q counters through hand-written commands: ALLOC / QUERY / DEALLOC_Q_COUNTER and their refusals, and
 * the counts of QPs attached at RST2INIT (qpc.counter_set_id) as an rxe peer provokes them and the error CQEs the
 * device writes for them, exactly, with the clear bit honoured and a QP's counts kept after it is destroyed.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class QCounterTest {

    private static final String SIM_IP = "127.0.0.35";
    private static final String RXE_IP = "127.0.0.36";

    private HostDriver drv;
    private RxePeer peer;
    private DmaRegion smem;
    private int skey;

    @BeforeAll
    void setUp() throws Exception {
        drv = HostDriver.open("qcnt0", SIM_IP).bringUp();
        peer = new RxePeer("qcntpeer0", RXE_IP);
        smem = DmaMemory.allocate(1 << 16);
        skey = drv.createMkey(smem, true, true, true, true);
    }

    @AfterAll
    void tearDown() {
        if (drv != null) {
            drv.close();
        }
        if (peer != null) {
            peer.close();
        }
        if (smem != null) {
            smem.close();
        }
    }

    private int alloc() {
        return (int) drv.run(drv.cmd(QCounterLayouts.ALLOC_Q_COUNTER_IN, CmdOpcode.ALLOC_Q_COUNTER),
                QCounterLayouts.ALLOC_Q_COUNTER_OUT).get("counter_set_id");
    }

    private Struct deallocCmd(int id) {
        return drv.cmd(QCounterLayouts.DEALLOC_Q_COUNTER_IN, CmdOpcode.DEALLOC_Q_COUNTER).set("counter_set_id", id);
    }

    private Struct queryCmd(int id, boolean clear) {
        return drv.cmd(QCounterLayouts.QUERY_Q_COUNTER_IN, CmdOpcode.QUERY_Q_COUNTER).set("counter_set_id", id)
                .set("clear", clear);
    }

    /** The set's counters by name; the ones not named in {@code expected} must be 0. */
    private Map<String, Long> query(int id, boolean clear) {
        Struct o = drv.run(queryCmd(id, clear), QCounterLayouts.QUERY_Q_COUNTER_OUT);
        Map<String, Long> m = new LinkedHashMap<>();
        for (String n : QCounterLayouts.COUNTERS) {
            m.put(n, o.get(n));
        }
        return m;
    }

    private static void assertCounts(Map<String, Long> got, Object... nameValue) {
        Map<String, Long> want = new LinkedHashMap<>();
        for (String n : QCounterLayouts.COUNTERS) {
            want.put(n, 0L);
        }
        for (int k = 0; k < nameValue.length; k += 2) {
            want.put((String) nameValue[k], ((Number) nameValue[k + 1]).longValue());
        }
        assertEquals(want, got);
    }

    private record Rc(DriverRings sim, HostDriver.Cq cq, QueuePair rqp, CompletionQueue rcq) {
    }

    /** An RC pair, the simulated side counted in set {@code counterSet} (0: none). */
    private Rc connect(int counterSet) throws Exception {
        HostDriver.Cq cq = drv.createCq(6);
        DriverRings sim = drv.createQp(QpLayouts.ST_RC, cq, cq, 6, 6, 0);
        CompletionQueue rcq = peer.own(peer.ctx.createCq(256));
        QueuePair rqp = peer.own(peer.pd.createQp(QpInitAttributes.rc(rcq, rcq).maxSendWr(64).maxRecvWr(64)));
        drv.modify(CmdOpcode.RST2INIT_QP, QpLayouts.RST2INIT_QP_IN, sim.qpn, 0, s -> s
                .set("qpc.rre", true).set("qpc.rwe", true).set("qpc.rae", true)
                .set("qpc.primary_address_path.vhca_port_num", 1)
                .set("qpc.counter_set_id", counterSet));
        rqp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC));
        sim.toRtr(rqp.qpn(), 100, InetAddress.getByName(RXE_IP), 3);
        sim.toRts(200);
        rqp.modify(QpAttributes.toRtr(sim.qpn, 200,
                AhAttributes.to(Gid.of(InetAddress.getByName(SIM_IP))).sgidIndex(1), Mtu.MTU_1024));
        // timeout 20 (4.3 s): a retransmission under a loaded machine's scheduling delays would count as
        // duplicate_request at the device and spoil the exact counts
        rqp.modify(QpAttributes.toRts(100).timeout(20));
        return new Rc(sim, cq, rqp, rcq);
    }

    /** {@code n} signaled RDMA WRITEs from the rxe peer into the simulated side's memory (rkey {@code rkey}). */
    private void peerWrites(Rc c, int n, int rkey, WcStatus expected) {
        for (int k = 0; k < n; k++) {
            assertEquals(1, c.rqp.postSend(new SendWr().wrId(k).opcode(WrOpcode.RDMA_WRITE)
                    .sendFlags(SendFlags.SIGNALED).rdma(smem.address() + 64L * k, rkey).sge(peer.mr, 0, 64)));
            assertEquals(expected, RxePeer.await(c.rcq).status());
        }
    }

    @Test
    void allocQueryDeallocAndRefusals() {
        int a = alloc();
        int b = alloc();
        assertTrue(a > 0 && b > 0, a + ", " + b);
        assertNotEquals(a, b);
        assertCounts(query(a, false));
        CommandException e = drv.refused(queryCmd(0xee, false), QCounterLayouts.QUERY_Q_COUNTER_OUT);
        assertEquals(CmdStatus.BAD_RES_ERR.value(), e.status(), e.getMessage());
        assertEquals(CmdSyndromes.BAD_Q_COUNTER, e.syndrome());
        drv.run(deallocCmd(a), QCounterLayouts.DEALLOC_Q_COUNTER_OUT);
        e = drv.refused(deallocCmd(a), QCounterLayouts.DEALLOC_Q_COUNTER_OUT);
        assertEquals(CmdStatus.BAD_RES_ERR.value(), e.status(), e.getMessage());
        e = drv.refused(queryCmd(a, false), QCounterLayouts.QUERY_Q_COUNTER_OUT);
        assertEquals(CmdSyndromes.BAD_Q_COUNTER, e.syndrome());
        drv.run(deallocCmd(b), QCounterLayouts.DEALLOC_Q_COUNTER_OUT);
    }

    @Test
    void rst2initToAnUnallocatedSetIsRefused() {
        HostDriver.Cq cq = drv.createCq(4);
        DriverRings sim = drv.createQp(QpLayouts.ST_RC, cq, cq, 4, 4, 0);
        CommandException e = org.junit.jupiter.api.Assertions.assertThrows(CommandException.class,
                () -> drv.modify(CmdOpcode.RST2INIT_QP, QpLayouts.RST2INIT_QP_IN, sim.qpn, 0, s -> s
                        .set("qpc.primary_address_path.vhca_port_num", 1).set("qpc.counter_set_id", 0x77)));
        assertEquals(CmdStatus.BAD_RES_ERR.value(), e.status(), e.getMessage());
        assertEquals(QpLayouts.STATE_RST, drv.queryQpState(sim.qpn), "a refused RST2INIT leaves the QP in RESET");
    }

    @Test
    void countsTheEventsOfAttachedQpsExactly() throws Exception {
        int set = alloc();
        int other = alloc();
        final int n = 7;
        // responder: n good WRITEs and one to a bad rkey, from the rxe peer
        Rc resp = connect(set);
        peerWrites(resp, n, skey, WcStatus.SUCCESS);
        assertCounts(query(set, false), "rx_write_requests", n);
        peerWrites(resp, 1, skey ^ 0x100, WcStatus.REM_ACCESS_ERR);
        // requester: a WRITE to a bad rkey at the peer; the receive posted before it and a SEND after it are flushed
        Rc req = connect(set);
        req.sim.postRecv(skey, smem.address() + 50000, 64);
        req.sim.begin(Mlx5Opcode.RDMA_WRITE, FmCeSe.CQ_UPDATE, 0)
                .raddr(peer.mr.address(), peer.mr.rkey() ^ 0x100).data(16, skey, smem.address()).post();
        req.cq.await(); // the WRITE's error CQE
        req.cq.await(); // the receive, flushed
        req.sim.begin(Mlx5Opcode.SEND, 0, 0).data(8, skey, smem.address()).post();
        req.cq.await(); // the SEND, flushed
        // a QP counted elsewhere, and one counted nowhere, change nothing here
        peerWrites(connect(other), 3, skey, WcStatus.SUCCESS);
        peerWrites(connect(0), 2, skey, WcStatus.SUCCESS);
        Object[] expected = {"rx_write_requests", n + 1, "resp_remote_access_errors", 1, "req_remote_access_errors", 1,
            "req_cqe_error", 1, "resp_cqe_flush_error", 1, "req_cqe_flush_error", 1};
        assertCounts(query(set, false), expected);
        assertCounts(query(other, false), "rx_write_requests", 3);
        // a clearing query answers the counts, then the set starts from zero
        assertCounts(query(set, true), expected);
        assertCounts(query(set, false));
        // a set QPs still name cannot go
        CommandException e = drv.refused(deallocCmd(set), QCounterLayouts.DEALLOC_Q_COUNTER_OUT);
        assertEquals(CmdStatus.RES_BUSY.value(), e.status(), e.getMessage());
    }

    @Test
    void aDestroyedQpsCountsStay() throws Exception {
        int set = alloc();
        Rc c = connect(set);
        peerWrites(c, 4, skey, WcStatus.SUCCESS);
        drv.run(drv.cmd(QpLayouts.DESTROY_QP_IN, CmdOpcode.DESTROY_QP).set("qpn", c.sim.qpn), QpLayouts.DESTROY_QP_OUT);
        assertCounts(query(set, false), "rx_write_requests", 4);
        drv.run(deallocCmd(set), QCounterLayouts.DEALLOC_Q_COUNTER_OUT);
    }
}
