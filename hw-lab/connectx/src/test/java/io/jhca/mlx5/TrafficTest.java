package io.jhca.mlx5;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.HashMap;
import java.util.Map;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CqLayouts;
import io.jhca.mlx5.cmd.MkeyLayouts;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cmd.QpModifyLayouts;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.eq.Eqe;
import io.jhca.mlx5.eq.EventType;
import io.jhca.mlx5.ring.CqBuffer;
import io.jhca.mlx5.testdev.ScriptedFirmware;
import io.jhca.verbs.Access;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * The verbs objects of the provider over scripted firmware and the loopback stand-in for the device: what CREATE_MKEY,
 * CREATE_CQ, CREATE_QP and the transitions carry, and traffic of every opcode through the builder and postSend, UD
 * with an address handle, error completions and flushes, CQ overrun reported on the EQ, reset.
 */
class TrafficTest {

    private ScriptedFirmware fw;
    private Mlx5Context ctx;
    private ProtectionDomain pd;
    private DmaRegion mem;
    private MemoryRegion mr;
    private final WorkCompletion wc = new WorkCompletion();

    @BeforeEach
    void open() {
        fw = Fixtures.firmware().start();
        ctx = Fixtures.open(fw);
        pd = ctx.allocatePd();
        mem = DmaMemory.allocate(DmaOptions.of(64 * 1024).lock(false));
        mr = pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);
    }

    @AfterEach
    void close() {
        mr.close();
        pd.close();
        ctx.close();
        mem.close();
    }

    private QueuePair[] rcPair(CompletionQueue cq, int sendWr, int inline) {
        QpInitAttributes init = QpInitAttributes.rc(cq, cq).maxSendWr(sendWr).maxRecvWr(sendWr).maxInlineData(inline)
                .maxSendSge(2);
        QueuePair a = pd.createQp(init);
        QueuePair b = pd.createQp(init);
        connect(a, b);
        connect(b, a);
        return new QueuePair[] {a, b};
    }

    private void connect(QueuePair q, QueuePair peer) {
        Access[] all = {Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC};
        q.modify(QpAttributes.toInit(1, all));
        q.modify(QpAttributes.toRtr(peer.qpn(), 0x100 + peer.qpn(), AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1),
                Mtu.MTU_1024));
        q.modify(QpAttributes.toRts(0x100 + q.qpn()));
    }

    /** Runs the device, then polls exactly {@code n} successful completions, by wr_id. */
    private Map<Long, WorkCompletion> poll(CompletionQueue cq, int n) {
        fw.process();
        Map<Long, WorkCompletion> out = new HashMap<>();
        for (int i = 0; i < n; i++) {
            WorkCompletion w = new WorkCompletion();
            assertEquals(1, cq.poll(w), "completion " + i + " of " + n);
            assertEquals(WcStatus.SUCCESS, w.status(), w.toString());
            out.put(w.wrId(), w);
        }
        assertEquals(0, cq.poll(wc), "no more completions");
        return out;
    }

    private void pollOne(CompletionQueue cq) {
        fw.process();
        assertEquals(1, cq.poll(wc), "a completion");
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
    }

    @Test
    void memoryKeyCommand() {
        DmaRegion slice = mem.slice(4096 + 100, 3 * 4096);
        MemoryRegion m = pd.register(slice, Access.LOCAL_WRITE, Access.REMOTE_READ);
        ScriptedFirmware.Seen s = fw.commands(CmdOpcode.CREATE_MKEY).get(1);
        String e = "memory_key_mkey_entry.";
        assertEquals(slice.address(), s.get(MkeyLayouts.CREATE_MKEY_IN, e + "start_addr"));
        assertEquals(3 * 4096, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "len"));
        assertEquals(1, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "rr"));
        assertEquals(1, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "lw"));
        assertEquals(1, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "lr"));
        assertEquals(0, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "rw"));
        assertEquals(0, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "a"));
        assertEquals(MkeyLayouts.ACCESS_MODE_MTT, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "access_mode_1_0"));
        assertEquals(12, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "log_page_size"));
        assertEquals(0xffffff, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "qpn"));
        assertEquals(2, s.get(MkeyLayouts.CREATE_MKEY_IN, e + "translations_octword_size"), "4 pages: 2 octwords");
        assertEquals(2, s.get(MkeyLayouts.CREATE_MKEY_IN, "translations_octword_actual_size"));
        assertEquals(MkeyLayouts.createMkeyInLength(4), s.input().length);
        for (int i = 0; i < 4; i++) {
            long page = mem.address() + 4096L * (i + 1);
            assertEquals(page | MkeyLayouts.MTT_PERM_RW, MkeyLayouts.CREATE_MKEY_IN.flexibleArray().getElement(s.in(), 0, i));
        }
        int tag = (int) s.get(MkeyLayouts.CREATE_MKEY_IN, e + "mkey_7_0");
        assertEquals(0x41 << 8 | tag, m.lkey(), "lkey = mkey_index << 8 | mkey_7_0");
        assertEquals(m.lkey(), m.rkey());
        assertEquals((mr.lkey() + 1) & 0xff, tag, "rolling tag");
        m.close();
        assertEquals(0x41, fw.commands(CmdOpcode.DESTROY_MKEY).get(0).get(MkeyLayouts.DESTROY_MKEY_IN, "mkey_index"));
        slice.close();
    }

    @Test
    void keyTagsRollAndSkipZero() {
        int previous = mr.lkey() & 0xff;
        for (int i = 0; i < 600; i++) {
            MemoryRegion m = pd.register(mem, Access.LOCAL_WRITE);
            int tag = m.lkey() & 0xff;
            assertTrue(tag != 0, "tag 0 could make key 0x100 = MLX5_INVALID_LKEY, the receive terminator");
            assertEquals(previous == 255 ? 1 : previous + 1, tag);
            previous = tag;
            m.close();
        }
    }

    @Test
    void completionQueueCommandAndRing() {
        CompletionQueue cq = ctx.createCq(100);
        assertEquals(127, cq.capacity(), "ncqe = 128 = roundup_pow_of_two(cqe + 1)");
        ScriptedFirmware.Seen s = fw.commands(CmdOpcode.CREATE_CQ).get(0);
        assertEquals(7, s.get(CqLayouts.CREATE_CQ_IN, "cq_context.log_cq_size"));
        assertEquals(ctx.hca().uar(), s.get(CqLayouts.CREATE_CQ_IN, "cq_context.uar_page"));
        assertEquals(ctx.hca().eq().eqn(), s.get(CqLayouts.CREATE_CQ_IN, "cq_context.c_eqn_or_apu_element"));
        assertEquals(CqLayouts.CQE_SZ_64, s.get(CqLayouts.CREATE_CQ_IN, "cq_context.cqe_sz"));
        assertEquals(0, s.get(CqLayouts.CREATE_CQ_IN, "cq_context.log_page_size"));
        long dbr = s.get(CqLayouts.CREATE_CQ_IN, "cq_context.dbr_addr");
        assertEquals(0, dbr & 63, "doorbell record in its own 64-byte slot");
        long pas = CqLayouts.CREATE_CQ_IN.flexibleArray().getElement(s.in(), 0, 0);
        UnsafeBuffer ring = new UnsafeBuffer(pas, 128 * 64);
        for (int i = 0; i < 128; i++) {
            assertEquals(CqBuffer.INVALID_OP_OWN, ring.getByte(i * 64 + 63), "op_own of CQE " + i);
        }
        cq.close();
        assertEquals(1, fw.commands(CmdOpcode.DESTROY_CQ).size());
    }

    @Test
    void rcQpCommandsCarryWhatMlx5IbSets() {
        CompletionQueue cq = ctx.createCq(16);
        QueuePair[] p = rcPair(cq, 8, 0);
        ScriptedFirmware.Seen c = fw.commands(CmdOpcode.CREATE_QP).get(0);
        assertEquals(QpLayouts.ST_RC, c.get(QpLayouts.CREATE_QP_IN, "qpc.st"));
        assertEquals(QpLayouts.PM_STATE_MIGRATED, c.get(QpLayouts.CREATE_QP_IN, "qpc.pm_state"));
        assertEquals(0x10, c.get(QpLayouts.CREATE_QP_IN, "qpc.pd"));
        assertEquals(ctx.hca().uar(), c.get(QpLayouts.CREATE_QP_IN, "qpc.uar_page"));
        assertEquals(cq.cqn(), c.get(QpLayouts.CREATE_QP_IN, "qpc.cqn_snd"));
        assertEquals(cq.cqn(), c.get(QpLayouts.CREATE_QP_IN, "qpc.cqn_rcv"));
        assertEquals(3, c.get(QpLayouts.CREATE_QP_IN, "qpc.log_rq_size"), "8 receive WQEs");
        assertEquals(0, c.get(QpLayouts.CREATE_QP_IN, "qpc.log_rq_stride"), "16-byte receive WQEs: log2(16) - 4");
        assertEquals(4, c.get(QpLayouts.CREATE_QP_IN, "qpc.log_sq_size"), "8 x 128-byte WQEs (48 + 2 x 16): 16 WQEBBs");
        assertEquals(8, p[0].capabilities().maxSendWr());

        ScriptedFirmware.Seen init = fw.commands(CmdOpcode.RST2INIT_QP).get(0);
        assertEquals(p[0].qpn(), init.get(QpLayouts.RST2INIT_QP_IN, "qpn"));
        assertEquals(1, init.get(QpLayouts.RST2INIT_QP_IN, "qpc.primary_address_path.vhca_port_num"));
        assertEquals(1, init.get(QpLayouts.RST2INIT_QP_IN, "qpc.rwe"));
        assertEquals(0, init.get(QpLayouts.RST2INIT_QP_IN, "qpc.rre"), "no read/atomic while max_dest_rd_atomic is 0");
        assertEquals(c.get(QpLayouts.CREATE_QP_IN, "qpc.dbr_addr"), init.get(QpLayouts.RST2INIT_QP_IN, "qpc.dbr_addr"));

        ScriptedFirmware.Seen rtr = fw.commands(CmdOpcode.INIT2RTR_QP).get(0);
        String path = "qpc.primary_address_path.";
        assertEquals(Mtu.MTU_1024.value(), rtr.get(QpLayouts.INIT2RTR_QP_IN, "qpc.mtu"));
        assertEquals(30, rtr.get(QpLayouts.INIT2RTR_QP_IN, "qpc.log_msg_max"));
        assertEquals(p[1].qpn(), rtr.get(QpLayouts.INIT2RTR_QP_IN, "qpc.remote_qpn"));
        assertEquals(0x100 + p[1].qpn(), rtr.get(QpLayouts.INIT2RTR_QP_IN, "qpc.next_rcv_psn"));
        assertEquals(0, rtr.get(QpLayouts.INIT2RTR_QP_IN, "qpc.log_rra_max"));
        assertEquals(12, rtr.get(QpLayouts.INIT2RTR_QP_IN, "qpc.min_rnr_nak"));
        assertEquals(1, rtr.get(QpLayouts.INIT2RTR_QP_IN, "qpc.rre"), "read and atomics once responder resources exist");
        assertEquals(1, rtr.get(QpLayouts.INIT2RTR_QP_IN, "qpc.rae"));
        assertEquals(QpModifyLayouts.ATOMIC_MODE_IB_COMP, rtr.get(QpLayouts.INIT2RTR_QP_IN, "qpc.atomic_mode"));
        assertEquals(QpModifyLayouts.OPTPAR_RRE | QpModifyLayouts.OPTPAR_RAE | QpModifyLayouts.OPTPAR_RWE,
                rtr.get(QpLayouts.INIT2RTR_QP_IN, "opt_param_mask"), "kernel opt_mask[INIT][RTR][RC] of the given mask");
        assertEquals(1, rtr.get(QpLayouts.INIT2RTR_QP_IN, path + "src_addr_index"));
        assertEquals(64, rtr.get(QpLayouts.INIT2RTR_QP_IN, path + "hop_limit"));
        assertEquals(0x02007f000003L, rtr.get(QpLayouts.INIT2RTR_QP_IN, path + "rmac"));
        assertEquals(1, rtr.get(QpLayouts.INIT2RTR_QP_IN, path + "vhca_port_num"));
        int fl = Mlx5Path.flowLabelOfQpns(p[0].qpn(), p[1].qpn());
        assertEquals(Mlx5Path.udpSportOfFlowLabel(fl), rtr.get(QpLayouts.INIT2RTR_QP_IN, path + "udp_sport"));
        byte[] rgid = new byte[16];
        QpLayouts.INIT2RTR_QP_IN.field(path + "rgid_rip").getBytes(rtr.in(), 0, rgid);
        assertArrayEquals(ctx.queryGid(1, 1).bytes(), rgid);

        ScriptedFirmware.Seen rts = fw.commands(CmdOpcode.RTR2RTS_QP).get(0);
        assertEquals(0x100 + p[0].qpn(), rts.get(QpLayouts.RTR2RTS_QP_IN, "qpc.next_send_psn"));
        assertEquals(7, rts.get(QpLayouts.RTR2RTS_QP_IN, "qpc.retry_count"));
        assertEquals(7, rts.get(QpLayouts.RTR2RTS_QP_IN, "qpc.rnr_retry"));
        assertEquals(14, rts.get(QpLayouts.RTR2RTS_QP_IN, path + "ack_timeout"));
        assertEquals(0, rts.get(QpLayouts.RTR2RTS_QP_IN, "qpc.log_sra_max"));
        assertEquals(0, rts.get(QpLayouts.RTR2RTS_QP_IN, "opt_param_mask"));

        p[0].modify(new QpAttributes().minRnrTimer(3));
        ScriptedFirmware.Seen rts2 = fw.commands(CmdOpcode.RTS2RTS_QP).get(0);
        assertEquals(3, rts2.get(QpModifyLayouts.RTS2RTS_QP_IN, "qpc.min_rnr_nak"));
        assertEquals(QpModifyLayouts.OPTPAR_RNR_TIMEOUT, rts2.get(QpModifyLayouts.RTS2RTS_QP_IN, "opt_param_mask"));

        p[0].modify(QpAttributes.toState(QpState.ERR));
        assertEquals(p[0].qpn(), fw.commands(CmdOpcode.QP_2ERR).get(0).get(QpLayouts.QP_2ERR_IN, "qpn"));
        p[0].close();
        p[1].close();
        assertEquals(2, fw.commands(CmdOpcode.QP_2RST).size(), "destroy moves a live QP to RESET first");
        assertEquals(2, fw.commands(CmdOpcode.DESTROY_QP).size());
        cq.close();
    }

    @Test
    void everyOpcodeThroughTheBuilderAndPostSend() {
        CompletionQueue cq = ctx.createCq(64);
        QueuePair[] p = rcPair(cq, 16, 64);
        QueuePair a = p[0];
        QueuePair b = p[1];
        UnsafeBuffer m = mem.buffer();
        long base = mr.address();
        // SEND via the builder, received by b
        b.postRecv(new RecvWr().wrId(100).sge(mr, 8192, 256));
        m.putStringWithoutLengthAscii(0, "hello mlx5");
        a.sendQueue().start().wrId(1).flags(SendFlags.SIGNALED).send().sge(mr, 0, 10);
        assertEquals(0, a.sendQueue().complete());
        Map<Long, WorkCompletion> got = poll(cq, 2);
        assertEquals(WcOpcode.SEND, got.get(1L).opcode());
        assertEquals(WcOpcode.RECV, got.get(100L).opcode());
        assertEquals(10, got.get(100L).byteLen());
        assertEquals("hello mlx5", m.getStringWithoutLengthAscii(8192, 10));

        // SEND_WITH_IMM via postSend, inline
        b.postRecv(new RecvWr().wrId(101).sge(mr, 8192, 256));
        m.putStringWithoutLengthAscii(16, "inline!");
        SendWr w = new SendWr().wrId(2).opcode(WrOpcode.SEND_WITH_IMM).immData(0x01020304)
                .sendFlags(SendFlags.SIGNALED | SendFlags.INLINE).sge(mr, 16, 7);
        assertEquals(1, a.postSend(w));
        got = poll(cq, 2);
        assertEquals(WcFlags.WITH_IMM, got.get(2L).wcFlags() & WcFlags.WITH_IMM);
        assertEquals(0x01020304, got.get(101L).immData());
        assertEquals(WcFlags.WITH_IMM, got.get(101L).wcFlags() & WcFlags.WITH_IMM);
        assertEquals("inline!", m.getStringWithoutLengthAscii(8192, 7));

        // RDMA WRITE with immediate
        b.postRecv(new RecvWr().wrId(102).sge(mr, 8192, 16));
        m.putLong(32, 0x1122334455667788L, ByteOrder.BIG_ENDIAN);
        a.sendQueue().start().wrId(3).flags(SendFlags.SIGNALED).rdmaWriteImm(mr.rkey(), base + 12288, 77).sge(mr, 32, 8);
        a.sendQueue().complete();
        got = poll(cq, 2);
        assertEquals(WcOpcode.RDMA_WRITE, got.get(3L).opcode());
        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, got.get(102L).opcode());
        assertEquals(77, got.get(102L).immData());
        assertEquals(0x1122334455667788L, m.getLong(12288, ByteOrder.BIG_ENDIAN));

        // RDMA READ
        m.putLong(20000, 0x0a0b0c0d0e0f1011L, ByteOrder.BIG_ENDIAN);
        a.sendQueue().start().wrId(4).flags(SendFlags.SIGNALED).rdmaRead(mr.rkey(), base + 20000).sge(mr, 24000, 8);
        a.sendQueue().complete();
        pollOne(cq);
        assertEquals(WcOpcode.RDMA_READ, wc.opcode());
        assertEquals(8, wc.byteLen());
        assertEquals(0x0a0b0c0d0e0f1011L, m.getLong(24000, ByteOrder.BIG_ENDIAN));

        // atomics
        m.putLong(30000, 40, ByteOrder.BIG_ENDIAN);
        a.sendQueue().start().wrId(5).flags(SendFlags.SIGNALED).atomicFetchAdd(mr.rkey(), base + 30000, 2)
                .sge(mr, 30008, 8);
        a.sendQueue().complete();
        pollOne(cq);
        assertEquals(WcOpcode.FETCH_ADD, wc.opcode());
        assertEquals(8, wc.byteLen());
        assertEquals(40, m.getLong(30008, ByteOrder.BIG_ENDIAN));
        assertEquals(42, m.getLong(30000, ByteOrder.BIG_ENDIAN));
        SendWr cs = new SendWr().wrId(6).opcode(WrOpcode.ATOMIC_CMP_AND_SWP).sendFlags(SendFlags.SIGNALED)
                .atomic(base + 30000, mr.rkey(), 42, 99).sge(mr, 30016, 8);
        a.postSend(cs);
        pollOne(cq);
        assertEquals(WcOpcode.COMP_SWAP, wc.opcode());
        assertEquals(42, m.getLong(30016, ByteOrder.BIG_ENDIAN));
        assertEquals(99, m.getLong(30000, ByteOrder.BIG_ENDIAN));
        assertEquals(0, cq.poll(wc));
        a.close();
        b.close();
        cq.close();
    }

    /**
     * The builder writes the common WR (one SGE at most, not inline) as one WQE when it closes and any other WR
     * segment by segment; postSend does the same from a SendWr. Every shape either path can take: the same bytes
     * but the 16-bit WQE index. Then the device runs both WQEs.
     */
    @ParameterizedTest(name = "{0} with {1} SGEs, inline {2}")
    @CsvSource({
        "SEND, 0, false", "SEND, 1, false", "SEND, 2, false", "SEND, 1, true", "SEND, 2, true",
        "SEND_WITH_IMM, 1, false", "SEND_WITH_IMM, 0, false",
        "RDMA_WRITE, 0, false", "RDMA_WRITE, 1, false", "RDMA_WRITE, 2, false", "RDMA_WRITE, 1, true",
        "RDMA_WRITE_WITH_IMM, 1, false", "RDMA_WRITE_WITH_IMM, 2, false",
        "RDMA_READ, 1, false", "RDMA_READ, 2, false",
        "ATOMIC_FETCH_AND_ADD, 1, false", "ATOMIC_CMP_AND_SWP, 1, false"})
    void builderAndPostSendWriteTheSameWqe(WrOpcode op, int sges, boolean inline) {
        CompletionQueue cq = ctx.createCq(16);
        QueuePair[] p = rcPair(cq, 4, 64);
        Mlx5Qp a = (Mlx5Qp) p[0];
        long remote = mr.address() + (op.isAtomic() ? 40960 : 512);
        boolean consumesRecv = op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE_WITH_IMM;
        if (consumesRecv) {
            p[1].postRecv(new RecvWr().wrId(100).sge(mr, 8192, 256));
            p[1].postRecv(new RecvWr().wrId(101).sge(mr, 8192, 256));
        }
        int flags = SendFlags.SIGNALED | SendFlags.FENCE | (inline ? SendFlags.INLINE : 0);
        int[][] sgl = op.isAtomic() ? new int[][] {{0, 8}} : new int[][] {{0, 10}, {200, 0}};   // the second is empty
        a.sendQueue().start().wrId(9).flags(flags);
        switch (op) {
            case SEND: a.sendQueue().send(); break;
            case SEND_WITH_IMM: a.sendQueue().sendImm(0x01020304); break;
            case RDMA_WRITE: a.sendQueue().rdmaWrite(mr.rkey(), remote); break;
            case RDMA_WRITE_WITH_IMM: a.sendQueue().rdmaWriteImm(mr.rkey(), remote, 0x01020304); break;
            case RDMA_READ: a.sendQueue().rdmaRead(mr.rkey(), remote); break;
            case ATOMIC_FETCH_AND_ADD: a.sendQueue().atomicFetchAdd(mr.rkey(), remote, 5); break;
            case ATOMIC_CMP_AND_SWP: a.sendQueue().atomicCmpSwp(mr.rkey(), remote, 0, 7); break;
            default: throw new IllegalArgumentException(op.toString());
        }
        for (int i = 0; i < sges; i++) {
            if (inline) {
                a.sendQueue().inlineData(mem.buffer(), sgl[i][0], sgl[i][1]);
            } else {
                a.sendQueue().sge(mr, sgl[i][0], sgl[i][1]);
            }
        }
        a.sendQueue().wrId(10).flags(0);   // after the opcode call: the open WR keeps what it opened with
        assertEquals(0, a.sendQueue().complete());
        SendWr w = new SendWr().wrId(9).opcode(op).sendFlags(flags).rdma(remote, mr.rkey()).immData(0x01020304)
                .numSge(sges);
        if (op == WrOpcode.ATOMIC_FETCH_AND_ADD) {
            w.atomic(remote, mr.rkey(), 5, 0);
        } else if (op == WrOpcode.ATOMIC_CMP_AND_SWP) {
            w.atomic(remote, mr.rkey(), 0, 7);
        }
        for (int i = 0; i < sges; i++) {
            w.sge(i).set(mr, sgl[i][0], sgl[i][1]);
        }
        assertEquals(1, a.postSend(w));
        UnsafeBuffer sq = a.sendRing().buffer();
        int first = a.sendRing().start();
        int second = first + 64;
        byte[] x = new byte[64];
        byte[] y = new byte[64];
        sq.getBytes(first, x);
        sq.getBytes(second, y);
        assertEquals(0, x[1] | x[2], "index 0");
        assertEquals(1, y[2], "index 1");
        x[1] = y[1];
        x[2] = y[2];
        assertArrayEquals(x, y, "same bytes but the 16-bit index");
        fw.process();
        WorkCompletion[] got = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        assertEquals(consumesRecv ? 4 : 2, cq.poll(got), "both sends, and the peer's receives");
        int sends = 0;
        for (WorkCompletion g : got) {
            if (g.qpNum() == p[0].qpn()) {
                assertEquals(WcStatus.SUCCESS, g.status(), g.toString());
                assertEquals(9, g.wrId(), g.toString());
                assertEquals(op.completionOpcode(), g.opcode(), g.toString());
                sends++;
            }
        }
        assertEquals(2, sends);
        p[0].close();
        p[1].close();
        cq.close();
    }

    @Test
    void udWithAddressHandle() {
        CompletionQueue cq = ctx.createCq(16);
        QueuePair a = pd.createQp(QpInitAttributes.ud(cq, cq).maxSendWr(4).maxRecvWr(4));
        QueuePair b = pd.createQp(QpInitAttributes.ud(cq, cq).maxSendWr(4).maxRecvWr(4));
        for (QueuePair q : new QueuePair[] {a, b}) {
            q.modify(QpAttributes.toInitUd(1, 0x11111111));
            q.modify(QpAttributes.toRtrUd());
            q.modify(QpAttributes.toRtsUd(0));
        }
        ScriptedFirmware.Seen init = fw.commands(CmdOpcode.RST2INIT_QP).get(0);
        assertEquals(0x11111111, init.get(QpLayouts.RST2INIT_QP_IN, "qpc.q_key"));
        assertEquals(QpLayouts.ST_UD, init.get(QpLayouts.RST2INIT_QP_IN, "qpc.st"));
        assertEquals(QpLayouts.MTU_4096, init.get(QpLayouts.RST2INIT_QP_IN, "qpc.mtu"));
        assertEquals(12, init.get(QpLayouts.RST2INIT_QP_IN, "qpc.log_msg_max"));
        AddressHandle ah = pd.createAh(AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1).flowLabel(0x12345));
        UnsafeBuffer av = (UnsafeBuffer) ((Mlx5Ah) ah).av();
        assertEquals(Mlx5Path.udpSportOfFlowLabel(0x12345), av.getShort(14, ByteOrder.BIG_ENDIAN) & 0xffff,
                "rlid carries the UDP source port");
        assertEquals(1 << 20 | 0x12345, av.getInt(28, ByteOrder.BIG_ENDIAN), "grh_gid_fl: sgid index, flow label");
        b.postRecv(new RecvWr().wrId(7).sge(mr, 4096, 1024));
        mem.buffer().putStringWithoutLengthAscii(0, "datagram");
        a.sendQueue().start().wrId(8).flags(SendFlags.SIGNALED).send().udAddr(ah, b.qpn(), 0x11111111).sge(mr, 0, 8);
        a.sendQueue().complete();
        WorkCompletion r = poll(cq, 2).get(7L);
        assertEquals(40 + 8, r.byteLen(), "GRH + payload");
        assertEquals(a.qpn(), r.srcQp());
        assertEquals(WcFlags.GRH, r.wcFlags() & WcFlags.GRH);
        assertEquals("datagram", mem.buffer().getStringWithoutLengthAscii(4096 + 40, 8));
        ah.close();
        a.close();
        b.close();
        cq.close();
    }

    @Test
    void errorCompletionMovesTheQpToErrorAndTheRestFlushes() {
        CompletionQueue cq = ctx.createCq(16);
        QueuePair[] p = rcPair(cq, 4, 0);
        fw.engine.failNext(fw.deviceQp(p[0].qpn()), CqeSyndrome.REMOTE_ACCESS_ERR);
        for (int i = 0; i < 2; i++) {
            p[0].sendQueue().start().wrId(i).flags(SendFlags.SIGNALED).rdmaWrite(0x1234, 0x1000).sge(mr, 0, 8);
            p[0].sendQueue().complete();
        }
        fw.process();
        assertEquals(1, cq.poll(wc));
        assertEquals(WcStatus.REM_ACCESS_ERR, wc.status());
        assertEquals(WcOpcode.RDMA_WRITE, wc.opcode());
        assertEquals(QpState.ERR, p[0].state());
        assertEquals(1, cq.poll(wc));
        assertEquals(WcStatus.WR_FLUSH_ERR, wc.status());
        assertEquals(1, wc.wrId());
        p[0].close();
        p[1].close();
        cq.close();
    }

    @Test
    void cqOverrunReportedOnTheEventQueue() {
        CompletionQueue small = ctx.createCq(1);
        CompletionQueue big = ctx.createCq(16);
        QueuePair a = pd.createQp(QpInitAttributes.rc(small, big).maxSendWr(4));
        QueuePair b = pd.createQp(QpInitAttributes.rc(big, big).maxSendWr(4));
        connect(a, b);
        connect(b, a);
        for (int i = 0; i < 3; i++) {
            a.sendQueue().start().wrId(i).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.address() + 100).sge(mr, 0, 8);
            a.sendQueue().complete();
        }
        fw.process();
        assertTrue(fw.deviceCq(small.cqn()).overrun(), "the stand-in saw more CQEs than entries");
        fw.postEqe(e -> Eqe.setCqError(e, 0, small.cqn(), EventType.CQ_ERROR_OVERRUN));
        AsyncEvent ev = null;
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (ev == null && System.nanoTime() < deadline) {
            ev = ctx.pollAsyncEvent();   // posted when the EQE arrives, before anyone polls the CQ
            Thread.onSpinWait();
        }
        assertNotNull(ev, "CQ_ERR posted by the event thread");
        assertEquals(AsyncEvent.Type.CQ_ERR, ev.type());
        VerbsException x = assertThrows(VerbsException.class, () -> small.poll(wc));
        assertEquals(VerbsException.EOVERFLOW, x.errno());
        assertThrows(VerbsException.class, () -> small.poll(wc), "every poll after the overrun throws");
        assertEquals(null, ctx.pollAsyncEvent(), "posted once");
        a.close();
        b.close();
        small.close();
        big.close();
    }

    @Test
    void resetDropsStaleCompletionsAndStartsTheRingsOver() {
        CompletionQueue cq = ctx.createCq(16);
        QueuePair[] p = rcPair(cq, 4, 0);
        for (int i = 0; i < 3; i++) {
            p[0].sendQueue().start().wrId(i).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.address() + 64).sge(mr, 0, 8);
            p[0].sendQueue().complete();
        }
        fw.process();
        p[0].modify(QpAttributes.toState(QpState.RESET));
        assertEquals(0, cq.poll(wc), "the CQEs of the reset QP are gone");
        Mlx5Qp q = (Mlx5Qp) p[0];
        assertEquals(0, q.sendRing().curPost());
        assertEquals(0, q.sendRing().head());
        connect(p[0], p[1]);
        p[0].sendQueue().start().wrId(42).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.address() + 64).sge(mr, 0, 8);
        p[0].sendQueue().complete();
        assertEquals(42, poll(cq, 1).keySet().iterator().next(), "traffic again from index 0");
        p[0].close();
        p[1].close();
        cq.close();
    }

    @Test
    void postAndPollAllocateNothing() {
        CompletionQueue cq = ctx.createCq(64);
        QpInitAttributes init = QpInitAttributes.rc(cq, cq).maxSendWr(8).maxRecvWr(8).maxInlineData(32).sqSigAll(true);
        QueuePair a = pd.createQp(init);
        QueuePair b = pd.createQp(init);
        connect(a, b);
        connect(b, a);
        com.sun.management.ThreadMXBean mx = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory
                .getThreadMXBean();
        long tid = Thread.currentThread().getId();
        SendWr send = new SendWr().opcode(WrOpcode.SEND).sendFlags(SendFlags.INLINE).sge(mr, 0, 16);
        RecvWr recv = new RecvWr().sge(mr, 4096, 64);
        WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
        long allocated = 0;
        java.util.concurrent.atomic.AtomicInteger asked = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger served = new java.util.concurrent.atomic.AtomicInteger();
        Thread device = new Thread(() -> {   // the stand-in allocates: it runs on its own thread
            int seen = 0;
            while (asked.get() >= 0) {
                int n = asked.get();
                if (n > seen) {
                    fw.process();
                    seen = n;
                    served.set(n);
                } else {
                    Thread.onSpinWait();
                }
            }
        });
        device.start();
        for (int i = 0; i < 20_000; i++) {
            long t0 = mx.getThreadAllocatedBytes(tid);
            b.postRecv(recv.wrId(i));
            a.postSend(send.wrId(i));   // unsignaled, but sq_sig_all: a CQE anyway
            a.sendQueue().start().wrId(-i).flags(0).rdmaWrite(mr.rkey(), mr.address() + 8192).sge(mr, 0, 8);
            a.sendQueue().complete();
            long t1 = mx.getThreadAllocatedBytes(tid);
            int ticket = asked.incrementAndGet();
            while (served.get() != ticket) {
                Thread.onSpinWait();
            }
            long t2 = mx.getThreadAllocatedBytes(tid);
            int n = 0;
            while (n < 3) {
                n += cq.poll(wcs, 3 - n);
            }
            long t3 = mx.getThreadAllocatedBytes(tid);
            if (i >= 10_000) {   // after warm-up (JIT, lazily sized tables)
                allocated += (t1 - t0) + (t3 - t2);
            }
        }
        // Anything allocated per round would show as at least 16 bytes x 10000 rounds; what stays below that is the
        // JIT's (a deoptimization now and then rematerializes objects), not the data path's. JMH -prof gc measures B/op.
        asked.set(-1);
        assertTrue(allocated < 16 * 10_000 / 10, allocated + " bytes allocated by 10000 post/poll rounds");
        a.close();
        b.close();
        cq.close();
    }

    @Test
    void sqdHoldsNewSendsUntilRts() {
        CompletionQueue cq = ctx.createCq(16);
        QueuePair[] p = rcPair(cq, 4, 0);
        int commands = fw.seen.size();
        p[0].modify(QpAttributes.toState(QpState.SQD));
        assertEquals(commands, fw.seen.size(), "mlx5 has no RTS->SQD command: the driver drains in software");
        assertEquals(QpState.SQD, p[0].state());
        p[0].sendQueue().start().wrId(5).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.address() + 64).sge(mr, 0, 8);
        p[0].sendQueue().complete();
        assertEquals(0, fw.process(), "nothing published while drained");
        assertThrows(VerbsException.class, () -> p[0].modify(new QpAttributes().state(QpState.SQD).timeout(3)));
        p[0].modify(QpAttributes.toState(QpState.RTS));
        assertEquals(commands, fw.seen.size(), "SQD->RTS without attributes: no command either");
        assertEquals(5, poll(cq, 1).keySet().iterator().next(), "released by SQD->RTS");
        p[0].modify(QpAttributes.toState(QpState.SQD));
        p[0].modify(new QpAttributes().state(QpState.RTS).minRnrTimer(4));
        assertEquals(4, fw.commands(CmdOpcode.RTS2RTS_QP).get(0).get(QpModifyLayouts.RTS2RTS_QP_IN, "qpc.min_rnr_nak"),
                "attributes with SQD->RTS go as RTS2RTS");
        p[0].close();
        p[1].close();
        cq.close();
    }

    @Test
    void qpErrorEventMovesTheQpToError() throws Exception {
        CompletionQueue cq = ctx.createCq(16);
        QueuePair[] p = rcPair(cq, 4, 0);
        fw.postEqe(e -> Eqe.setQpEvent(e, 0, EventType.WQ_CATAS_ERROR, p[0].qpn()));
        long deadline = System.nanoTime() + 5_000_000_000L;
        AsyncEvent ev = null;
        while (ev == null && System.nanoTime() < deadline) {
            ev = ctx.pollAsyncEvent();
            Thread.sleep(2);
        }
        assertNotNull(ev, "the events thread saw the EQE");
        assertEquals(AsyncEvent.Type.QP_FATAL, ev.type());
        assertEquals(QpState.ERR, p[0].state());
        p[0].close();
        p[1].close();
        cq.close();
    }

    @Test
    void badInlineSgeIsRefusedAndTheChainBeforeItIsPosted() {
        CompletionQueue cq = ctx.createCq(16);
        QueuePair[] p = rcPair(cq, 4, 64);
        SendWr good = new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .rdma(mr.address() + 1000, mr.rkey()).sge(mr, 0, 8);
        SendWr bad = new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED | SendFlags.INLINE)
                .rdma(mr.address() + 1000, mr.rkey());
        bad.sge(0).set(0xdead_0000L, 8, mr.lkey());
        bad.numSge(1);
        good.next(bad);
        VerbsException e = assertThrows(VerbsException.class, () -> p[0].postSend(good));
        assertTrue(e.getMessage().contains("INLINE"), e.getMessage());
        assertEquals(1, fw.process(), "the good WR before the bad one went out");
        assertEquals(1, cq.poll(wc));
        assertEquals(1, wc.wrId());
        assertFalse(cq.poll(wc) == 1);
        // the refused WR's WQE was dropped, not left open: the next post (one-call fast path) goes out
        good.next(null).wrId(3);
        assertEquals(1, p[0].postSend(good));
        assertEquals(1, fw.process());
        assertEquals(1, cq.poll(wc));
        assertEquals(3, wc.wrId());
        p[0].close();
        p[1].close();
        cq.close();
    }

    @Test
    void inlineSourceInAnotherPdsRegistrationIsRefused() {
        // the CPU copies inline bytes from the SGE's address, so the span must lie in an MR of the QP's own PD, as
        // the device requires of a gather entry's lkey; an MR of another PD on the same device does not qualify
        CompletionQueue cq = ctx.createCq(16);
        QueuePair[] p = rcPair(cq, 4, 64);
        ProtectionDomain otherPd = ctx.allocatePd();
        DmaRegion otherMem = DmaMemory.allocate(DmaOptions.of(4096).lock(false));
        MemoryRegion otherMr = otherPd.register(otherMem, Access.LOCAL_WRITE);
        SendWr foreign = new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED | SendFlags.INLINE)
                .rdma(mr.address() + 1000, mr.rkey()).sge(otherMr, 0, 8);
        VerbsException e = assertThrows(VerbsException.class, () -> p[0].postSend(foreign));
        assertEquals(VerbsException.EINVAL, e.errno());
        assertTrue(e.getMessage().contains("this QP's PD"), e.getMessage());
        assertEquals(0, fw.process(), "nothing posted");
        SendWr own = new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED | SendFlags.INLINE)
                .rdma(mr.address() + 1000, mr.rkey()).sge(mr, 0, 8);
        assertEquals(1, p[0].postSend(own), "the same WR from the QP's own PD");
        pollOne(cq);
        assertEquals(2, wc.wrId());
        otherMr.close();
        otherPd.close();
        otherMem.close();
        p[0].close();
        p[1].close();
        cq.close();
    }

    @Test
    void aFullSendQueueTakesNoWrOfAnyShape() {
        // the scripted device runs nothing before fw.process(), so the queue stays full; every path that writes a WQE
        // must see that and write nothing: a WQE written anyway would overwrite one the device has not run yet
        CompletionQueue cq = ctx.createCq(16);
        QueuePair[] p = rcPair(cq, 4, 64);
        QueuePair a = p[0];
        int n = a.capabilities().maxSendWr();
        for (int i = 0; i < n; i++) {
            assertEquals(1, a.postSend(write(i).sge(mr, 0, 8)), "WR " + i + " of max_send_wr " + n);
        }
        assertEquals(0, a.postSend(write(100).sge(mr, 0, 8)), "postSend, one common WR");
        SendWr twoSges = write(101).sge(mr, 0, 8);
        twoSges.sge(1).set(mr, 8, 8);
        twoSges.numSge(2);
        assertEquals(0, a.postSend(twoSges), "postSend, a WR of two SGEs");
        assertEquals(0, a.postSend(write(102).sendFlags(SendFlags.SIGNALED | SendFlags.INLINE).sge(mr, 0, 8)),
                "postSend, an inline WR");
        a.sendQueue().start().wrId(103).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.address() + 1000).sge(mr, 0, 8);
        assertEquals(VerbsException.ENOMEM, a.sendQueue().complete(), "builder, a common WR");
        a.sendQueue().start().wrId(104).flags(SendFlags.SIGNALED).atomicFetchAdd(mr.rkey(), mr.address() + 30000, 1)
                .sge(mr, 30008, 8);
        assertEquals(VerbsException.ENOMEM, a.sendQueue().complete(), "builder, an atomic");
        assertEquals(n, fw.process(), "the device runs the WRs that fitted, nothing more");
        Map<Long, WorkCompletion> got = poll(cq, n);
        for (long i = 0; i < n; i++) {
            assertTrue(got.containsKey(i), "WR " + i + " completed: " + got.keySet());
        }
        p[0].close();
        p[1].close();
        cq.close();
    }

    private SendWr write(long wrId) {
        return new SendWr().wrId(wrId).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                .rdma(mr.address() + 1000, mr.rkey());
    }
}
