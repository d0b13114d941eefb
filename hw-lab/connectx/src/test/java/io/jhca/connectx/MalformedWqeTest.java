package io.jhca.connectx;

import static io.jhca.connectx.CqeBytes.assertCqe;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.net.InetAddress;
import java.util.function.ToIntFunction;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cq.CqeSyndrome;
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
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.WcStatus;

/**
 * Send WQEs the HCA must refuse, each after a good SEND: the good one completes first, the bad one ends as an error
 * CQE with the syndrome hardware uses (LOCAL_QP_OP_ERR, LOCAL_LENGTH_ERR, LOCAL_PROT_ERR...) and the model's vendor
 * syndrome naming the check, the QP goes to the error state and the WQE after it is flushed. Nothing reaches the wire
 * and the model keeps running (no model errors counted).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MalformedWqeTest {

    private static final String SIM_IP = "127.0.0.35";
    private static final String RXE_IP = "127.0.0.36";
    private static final int UIDX = 0x1234;

    private HostDriver drv;
    private RxePeer peer;
    private DmaRegion smem;
    private DmaRegion readOnly;
    private int skey;
    private int roKey;
    private static MalformedWqeTest self;

    @BeforeAll
    void setUp() throws Exception {
        drv = HostDriver.open("bad0", SIM_IP).bringUp();
        peer = new RxePeer("peer1", RXE_IP);
        smem = DmaMemory.allocate(1 << 16);
        readOnly = DmaMemory.allocate(4096);
        skey = drv.createMkey(smem, true, true, true, true);
        roKey = drv.createMkey(readOnly, false, false, false, false);
        self = this;
    }

    @AfterAll
    void tearDown() {
        drv.close();
        peer.close();
        smem.close();
        readOnly.close();
    }

    /** One malformed WQE: it posts itself on the rings and returns its index. */
    private record Case(String name, int opcode, int syndrome, int vendor, ToIntFunction<DriverRings> post) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                new Case("unknown opcode", 0x3e, CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_OPCODE,
                        r -> r.begin(0x3e, FmCeSe.CQ_UPDATE, 0).data(8, self.skey, self.smem.address()).post()),
                new Case("opcode the model does not run (LOCAL_INVAL)", Mlx5Opcode.LOCAL_INVAL,
                        CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_OPCODE,
                        r -> r.begin(Mlx5Opcode.LOCAL_INVAL, FmCeSe.CQ_UPDATE, 0).post()),
                new Case("UMR without its UMR control and mkey context segments", Mlx5Opcode.UMR,
                        CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_SEGMENT,
                        r -> r.begin(Mlx5Opcode.UMR, FmCeSe.CQ_UPDATE, 0).post()),
                new Case("DS count 0", Mlx5Opcode.SEND, CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_DS,
                        r -> r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).post(0, Mlx5Opcode.SEND, r.qpn, r.sqPi)),
                new Case("DS count beyond the doorbell record", Mlx5Opcode.SEND, CqeSyndrome.LOCAL_QP_OP_ERR,
                        CqeErrors.VENDOR_BAD_DS,
                        r -> r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).data(8, self.skey, self.smem.address())
                                .postPartial(8, 1)),
                new Case("RDMA WRITE without its raddr segment", Mlx5Opcode.RDMA_WRITE, CqeSyndrome.LOCAL_QP_OP_ERR,
                        CqeErrors.VENDOR_BAD_SEGMENT, r -> r.begin(Mlx5Opcode.RDMA_WRITE, FmCeSe.CQ_UPDATE, 0).post()),
                new Case("atomic with a gather entry past the WQE", Mlx5Opcode.ATOMIC_FA,
                        CqeSyndrome.LOCAL_QP_OP_ERR, CqeErrors.VENDOR_BAD_SEGMENT,
                        r -> r.begin(Mlx5Opcode.ATOMIC_FA, FmCeSe.CQ_UPDATE, 0).raddr(0, 0).fetchAdd(1).post()),
                new Case("inline longer than the WQE", Mlx5Opcode.SEND, CqeSyndrome.LOCAL_LENGTH_ERR,
                        CqeErrors.VENDOR_INLINE_LENGTH,
                        r -> r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).inlineHeader(200, 1).post()),
                new Case("inline on an RDMA READ", Mlx5Opcode.RDMA_READ, CqeSyndrome.LOCAL_QP_OP_ERR,
                        CqeErrors.VENDOR_BAD_SEGMENT,
                        r -> r.begin(Mlx5Opcode.RDMA_READ, FmCeSe.CQ_UPDATE, 0).raddr(0, 1).inline(new byte[8]).post()),
                new Case("atomic on 16 local bytes", Mlx5Opcode.ATOMIC_CS, CqeSyndrome.LOCAL_LENGTH_ERR,
                        CqeErrors.VENDOR_LENGTH, r -> r.begin(Mlx5Opcode.ATOMIC_CS, FmCeSe.CQ_UPDATE, 0)
                                .raddr(self.peer.mr.address(), self.peer.mr.rkey()).compareSwap(0, 1)
                                .data(16, self.skey, self.smem.address()).post()),
                new Case("unknown lkey", Mlx5Opcode.SEND, CqeSyndrome.LOCAL_PROT_ERR, CqeErrors.VENDOR_BAD_LKEY,
                        r -> r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0)
                                .data(8, self.skey + (7 << 8), self.smem.address()).post()),
                new Case("lkey with the wrong variant byte", Mlx5Opcode.SEND, CqeSyndrome.LOCAL_PROT_ERR,
                        CqeErrors.VENDOR_BAD_LKEY, r -> r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0)
                                .data(8, self.skey ^ 1, self.smem.address()).post()),
                new Case("address outside the key", Mlx5Opcode.SEND, CqeSyndrome.LOCAL_PROT_ERR,
                        CqeErrors.VENDOR_BAD_ADDRESS, r -> r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0)
                                .data(16, self.skey, self.smem.address() + self.smem.length() - 8).post()),
                new Case("READ into a key without local write", Mlx5Opcode.RDMA_READ, CqeSyndrome.LOCAL_PROT_ERR,
                        CqeErrors.VENDOR_NO_LOCAL_WRITE, r -> r.begin(Mlx5Opcode.RDMA_READ, FmCeSe.CQ_UPDATE, 0)
                                .raddr(self.peer.mr.address(), self.peer.mr.rkey())
                                .data(8, self.roKey, self.readOnly.address()).post()),
                new Case("control segment with another WQE index", Mlx5Opcode.SEND, CqeSyndrome.LOCAL_QP_OP_ERR,
                        CqeErrors.VENDOR_BAD_INDEX, r -> r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0)
                                .data(8, self.skey, self.smem.address()).post(2, Mlx5Opcode.SEND, r.qpn, r.sqPi + 5)),
                new Case("control segment with another QPN", Mlx5Opcode.SEND, CqeSyndrome.LOCAL_QP_OP_ERR,
                        CqeErrors.VENDOR_BAD_QPN, r -> r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0)
                                .data(8, self.skey, self.smem.address()).post(2, Mlx5Opcode.SEND, r.qpn + 1, r.sqPi)),
                new Case("misaligned atomic", Mlx5Opcode.ATOMIC_FA, CqeSyndrome.REMOTE_INVAL_REQ_ERR,
                        CqeErrors.VENDOR_UNALIGNED_ATOMIC, r -> r.begin(Mlx5Opcode.ATOMIC_FA, FmCeSe.CQ_UPDATE, 0)
                                .raddr(self.peer.mr.address() + 4, self.peer.mr.rkey()).fetchAdd(1)
                                .data(8, self.skey, self.smem.address()).post()))
                .map(Arguments::of);
    }

    /** A connected RC pair (the peer with a few receives posted). */
    private DriverRings connected(HostDriver.Cq cq) throws Exception {
        DriverRings r = drv.createQp(QpLayouts.ST_RC, cq, cq, 5, 4, 0);
        CompletionQueue rcq = peer.own(peer.ctx.createCq(64));
        QueuePair rqp = peer.own(peer.pd.createQp(QpInitAttributes.rc(rcq, rcq)));
        r.toInit(true, true, true);
        rqp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC));
        r.toRtr(rqp.qpn(), 0, InetAddress.getByName(RXE_IP), 3);
        r.toRts(0);
        rqp.modify(QpAttributes.toRtr(r.qpn, 0, AhAttributes.to(Gid.of(InetAddress.getByName(SIM_IP))).sgidIndex(1),
                Mtu.MTU_1024));
        rqp.modify(QpAttributes.toRts(0));
        for (int i = 0; i < 4; i++) {
            RecvWr rw = new RecvWr().wrId(i);
            rw.sge(0).set(peer.mr, 0, 64);
            rw.numSge(1);
            rqp.postRecv(rw);
        }
        return r;
    }

    /**
     * Random bytes as WQEs (random opcode among the interesting ones, DS count, flags, gather entries): whatever
     * they say, the model answers with CQEs (the NOP after each one completes or is flushed), counts no internal error
     * and keeps serving commands.
     */
    @org.junit.jupiter.api.Test
    void randomWqesNeverHurtTheModel() throws Exception {
        java.util.Random rnd = new java.util.Random(20261122);
        int[] opcodes = {Mlx5Opcode.SEND, Mlx5Opcode.SEND_IMM, Mlx5Opcode.RDMA_WRITE, Mlx5Opcode.RDMA_WRITE_IMM,
            Mlx5Opcode.RDMA_READ, Mlx5Opcode.ATOMIC_CS, Mlx5Opcode.ATOMIC_FA, Mlx5Opcode.NOP, 0};
        long modelErrors = drv.counters().get(ModelCounters.Counter.MODEL_ERRORS);
        HostDriver.Cq cq = drv.createCq(8);
        for (int iteration = 0; iteration < 30; iteration++) {
            DriverRings r = connected(cq);
            byte[] junk = new byte[4 * 64];
            rnd.nextBytes(junk);
            int op = opcodes[rnd.nextInt(opcodes.length)];
            int opcode = op == 0 ? rnd.nextInt(256) : op;
            int ds = rnd.nextInt(17);
            r.begin(opcode, rnd.nextInt(256) & ~FmCeSe.CQ_UPDATE, 0);
            r.raw(junk);
            // post every WQEBB the DS count claims, so the NOP after it is a WQE of its own
            r.postPartial(ds, Math.max(1, (ds * 16 + 63) / 64));
            int nop = r.begin(Mlx5Opcode.NOP, FmCeSe.CQ_UPDATE, 0).post();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (true) {
                byte[] cqe = cq.await();
                int counter = (cqe[60] & 0xff) << 8 | (cqe[61] & 0xff);
                int qpn = ((cqe[57] & 0xff) << 16) | ((cqe[58] & 0xff) << 8) | (cqe[59] & 0xff);
                if (qpn == r.qpn && counter == nop) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("the NOP after random WQE " + iteration + " never completed");
                }
            }
        }
        assertEquals(modelErrors, drv.counters().get(ModelCounters.Counter.MODEL_ERRORS));
        assertEquals(QpLayouts.STATE_RST, drv.queryQpState(drv.createQp(QpLayouts.ST_RC, cq, cq, 2, 2, 0).qpn));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void malformedWqeEndsAsErrorCqe(Case c) throws Exception {
        long modelErrors = drv.counters().get(ModelCounters.Counter.MODEL_ERRORS);
        HostDriver.Cq cq = drv.createCq(5);
        DriverRings r = drv.createQp(QpLayouts.ST_RC, cq, cq, 5, 4, 0);
        CompletionQueue rcq = peer.own(peer.ctx.createCq(64));
        QueuePair rqp = peer.own(peer.pd.createQp(QpInitAttributes.rc(rcq, rcq)));
        r.toInit(true, true, true);
        rqp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC));
        r.toRtr(rqp.qpn(), 0, InetAddress.getByName(RXE_IP), 3);
        r.toRts(0);
        rqp.modify(QpAttributes.toRtr(r.qpn, 0, AhAttributes.to(Gid.of(InetAddress.getByName(SIM_IP))).sgidIndex(1),
                Mtu.MTU_1024));
        rqp.modify(QpAttributes.toRts(0));
        RecvWr rw = new RecvWr().wrId(1);
        rw.sge(0).set(peer.mr, 0, 64);
        rw.numSge(1);
        rqp.postRecv(rw);

        int good = r.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).data(8, skey, smem.address()).post();
        int bad = c.post().applyAsInt(r);

        assertCqe(CqeBytes.req(Mlx5Opcode.SEND, r.qpn, good, 0, UIDX, 0), cq.await());
        assertEquals(WcStatus.SUCCESS, RxePeer.await(rcq).status());
        assertCqe(CqeBytes.err(true, c.opcode(), r.qpn, bad, c.syndrome(), c.vendor(), UIDX, 0), cq.await());
        // posted only now, so the doorbell record cannot cover it while the bad WQE is parsed
        int after = r.begin(Mlx5Opcode.SEND, 0, 0).data(8, skey, smem.address()).post();
        assertCqe(CqeBytes.err(true, Mlx5Opcode.SEND, r.qpn, after, CqeSyndrome.WR_FLUSH_ERR, CqeErrors.VENDOR_FLUSH,
                UIDX, 0), cq.await());
        assertEquals(QpLayouts.STATE_ERR, drv.queryQpState(r.qpn));
        assertEquals(modelErrors, drv.counters().get(ModelCounters.Counter.MODEL_ERRORS));
        // only the good SEND reached the peer: nothing else completes there
        Thread.sleep(30);
        assertEquals(0, rcq.poll(new io.jhca.verbs.WorkCompletion()));
    }
}
