package io.jhca.connectx;

import static io.jhca.connectx.CqeBytes.assertCqe;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.nio.ByteOrder;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.cq.ErrCqe;
import io.jhca.mlx5.wqe.FmCeSe;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.Access;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * RoCEv2 traffic between the simulated ConnectX (driven by hand-written WQEs, doorbell records and UAR doorbells) and
 * an rxe device: SEND, SEND with immediate, RDMA WRITE (with immediate), RDMA READ, both atomics, in both directions
 * where the verbs allow, RC and UD; unsignaled WQEs, inline data, a WQE wrapping the ring end; a remote access error
 * and the flush after it. Every CQE is compared byte for byte with one built from mlx5dv.h's layout, and read back
 * with the cq package's readers.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TrafficTest {

    private static final String SIM_IP = "127.0.0.33";
    private static final String RXE_IP = "127.0.0.34";
    private static final int UIDX = 0x1234;

    private HostDriver drv;
    private RxePeer peer;
    private DmaRegion smem;
    private UnsafeBuffer sbuf;
    private int skey;

    @BeforeAll
    void setUp() throws Exception {
        drv = HostDriver.open("traffic0", SIM_IP).bringUp();
        peer = new RxePeer("peer0", RXE_IP);
        smem = DmaMemory.allocate(1 << 16);
        sbuf = smem.buffer();
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
            smem.close(); // unmapped when the function closed
        }
    }

    private record Rc(DriverRings sim, HostDriver.Cq cq, QueuePair rqp, CompletionQueue rcq) {
    }

    private Rc connect(int logSq) throws Exception {
        HostDriver.Cq cq = drv.createCq(6);
        DriverRings sim = drv.createQp(QpLayouts.ST_RC, cq, cq, logSq, 6, 0);
        CompletionQueue rcq = peer.own(peer.ctx.createCq(256));
        QueuePair rqp = peer.own(peer.pd.createQp(QpInitAttributes.rc(rcq, rcq).maxSendWr(64).maxRecvWr(64)));
        sim.toInit(true, true, true);
        rqp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC));
        sim.toRtr(rqp.qpn(), 100, InetAddress.getByName(RXE_IP), 3);
        sim.toRts(200);
        rqp.modify(QpAttributes.toRtr(sim.qpn, 200,
                AhAttributes.to(Gid.of(InetAddress.getByName(SIM_IP))).sgidIndex(1), Mtu.MTU_1024));
        rqp.modify(QpAttributes.toRts(100));
        return new Rc(sim, cq, rqp, rcq);
    }

    private static void fill(UnsafeBuffer b, int off, int len, int seed) {
        for (int i = 0; i < len; i++) {
            b.putByte(off + i, (byte) (seed + i * 7));
        }
    }

    private static byte[] bytes(UnsafeBuffer b, int off, int len) {
        byte[] out = new byte[len];
        b.getBytes(off, out);
        return out;
    }

    private void postRxeRecv(QueuePair qp, int off, int len, long wrId) {
        RecvWr r = new RecvWr().wrId(wrId);
        r.sge(0).set(peer.mr, off, len);
        r.numSge(1);
        assertEquals(1, qp.postRecv(r));
    }

    @Test
    void simSendsAndRxeReceives() throws Exception {
        Rc c = connect(6);
        postRxeRecv(c.rqp, 0, 256, 7);
        fill(sbuf, 0, 100, 1);
        int idx = c.sim.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).data(100, skey, smem.address()).post();
        byte[] cqe = c.cq.await();
        assertCqe(CqeBytes.req(Mlx5Opcode.SEND, c.sim.qpn, idx, 0, UIDX, c.cq.lastOwner()), cqe);
        Cqe64 r = new Cqe64().wrap(new UnsafeBuffer(cqe), 0);
        assertEquals(CqeOpcode.REQ, r.opcode());
        assertEquals(Mlx5Opcode.SEND, r.sendOpcode());
        assertEquals(c.sim.qpn, r.qpn());
        assertEquals(idx, r.wqeCounter());
        assertEquals(UIDX, r.srqn());
        WorkCompletion wc = RxePeer.await(c.rcq);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertEquals(WcOpcode.RECV, wc.opcode());
        assertEquals(7, wc.wrId());
        assertEquals(100, wc.byteLen());
        assertArrayEquals(bytes(sbuf, 0, 100), bytes(peer.mem.buffer(), 0, 100));
        assertEquals(0, drv.counters().get(ModelCounters.Counter.SQ_DOORBELL_MISMATCHES));
        assertTrue(drv.counters().get(ModelCounters.Counter.SQ_DOORBELLS) >= 1);
    }

    @Test
    void rxeSendsWithImmediateAndSimReceives() throws Exception {
        Rc c = connect(6);
        int rq = c.sim.postRecv(skey, smem.address() + 1024, 512);
        fill(peer.mem.buffer(), 512, 200, 3);
        SendWr w = new SendWr().wrId(9).opcode(WrOpcode.SEND_WITH_IMM).immData(0x11223344)
                .sendFlags(SendFlags.SIGNALED).sge(peer.mr, 512, 200);
        assertEquals(1, c.rqp.postSend(w));
        assertEquals(WcStatus.SUCCESS, RxePeer.await(c.rcq).status());
        byte[] cqe = c.cq.await();
        assertCqe(CqeBytes.resp(CqeOpcode.RESP_SEND_IMM, c.sim.qpn, rq, 200, 0x11223344, 0, 0, UIDX,
                c.cq.lastOwner()), cqe);
        Cqe64 r = new Cqe64().wrap(new UnsafeBuffer(cqe), 0);
        assertEquals(0x11223344, r.immInvalPkey());
        assertEquals(200, r.byteCnt());
        assertArrayEquals(bytes(peer.mem.buffer(), 512, 200), bytes(sbuf, 1024, 200));
    }

    @Test
    void rdmaWriteReadAndWriteWithImmediate() throws Exception {
        Rc c = connect(6);
        // WRITE from the simulated device into the rxe peer's memory
        fill(sbuf, 2048, 300, 5);
        int w = c.sim.begin(Mlx5Opcode.RDMA_WRITE, FmCeSe.CQ_UPDATE, 0)
                .raddr(peer.mr.address() + 4096, peer.mr.rkey()).data(300, skey, smem.address() + 2048).post();
        assertCqe(CqeBytes.req(Mlx5Opcode.RDMA_WRITE, c.sim.qpn, w, 0, UIDX, 0), c.cq.await());
        assertArrayEquals(bytes(sbuf, 2048, 300), bytes(peer.mem.buffer(), 4096, 300));
        // READ back another range: byte_cnt is the length read
        fill(peer.mem.buffer(), 8192, 500, 9);
        int rd = c.sim.begin(Mlx5Opcode.RDMA_READ, FmCeSe.CQ_UPDATE, 0)
                .raddr(peer.mr.address() + 8192, peer.mr.rkey()).data(500, skey, smem.address() + 8192).post();
        assertCqe(CqeBytes.req(Mlx5Opcode.RDMA_READ, c.sim.qpn, rd, 500, UIDX, 0), c.cq.await());
        assertArrayEquals(bytes(peer.mem.buffer(), 8192, 500), bytes(sbuf, 8192, 500));
        // the peer WRITEs with immediate into the simulated device's key: it consumes a receive WQE
        int rq = c.sim.postRecv(skey, smem.address() + 40960, 16);
        fill(peer.mem.buffer(), 12288, 64, 11);
        SendWr wi = new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immData(0xdeadbeef)
                .sendFlags(SendFlags.SIGNALED).rdma(smem.address() + 12288, skey).sge(peer.mr, 12288, 64);
        assertEquals(1, c.rqp.postSend(wi));
        assertEquals(WcStatus.SUCCESS, RxePeer.await(c.rcq).status());
        assertCqe(CqeBytes.resp(CqeOpcode.RESP_WR_IMM, c.sim.qpn, rq, 64, 0xdeadbeef, 0, 0, UIDX, 0),
                c.cq.await());
        assertArrayEquals(bytes(peer.mem.buffer(), 12288, 64), bytes(sbuf, 12288, 64));
    }

    @Test
    void atomicsBothWays() throws Exception {
        Rc c = connect(6);
        UnsafeBuffer rb = peer.mem.buffer();
        rb.putLong(16384, 100, ByteOrder.nativeOrder()); // rxe operates on host-order 64-bit words
        int fa = c.sim.begin(Mlx5Opcode.ATOMIC_FA, FmCeSe.CQ_UPDATE, 0)
                .raddr(peer.mr.address() + 16384, peer.mr.rkey()).fetchAdd(5).data(8, skey, smem.address() + 16384)
                .post();
        assertCqe(CqeBytes.req(Mlx5Opcode.ATOMIC_FA, c.sim.qpn, fa, 8, UIDX, 0), c.cq.await());
        assertEquals(105, rb.getLong(16384, ByteOrder.nativeOrder()));
        assertEquals(100, sbuf.getLong(16384, ByteOrder.nativeOrder()));
        int cs = c.sim.begin(Mlx5Opcode.ATOMIC_CS, FmCeSe.CQ_UPDATE, 0)
                .raddr(peer.mr.address() + 16384, peer.mr.rkey()).compareSwap(105, 7)
                .data(8, skey, smem.address() + 16392).post();
        assertCqe(CqeBytes.req(Mlx5Opcode.ATOMIC_CS, c.sim.qpn, cs, 8, UIDX, 0), c.cq.await());
        assertEquals(7, rb.getLong(16384, ByteOrder.nativeOrder()));
        assertEquals(105, sbuf.getLong(16392, ByteOrder.nativeOrder()));
        // the peer's atomics on the simulated device's memory (key with atomic access)
        sbuf.putLong(20480, 40, ByteOrder.nativeOrder());
        c.rqp.sendQueue().start().wrId(3).flags(SendFlags.SIGNALED)
                .atomicFetchAdd(skey, smem.address() + 20480, 2).sge(peer.mr, 24576, 8);
        assertEquals(0, c.rqp.sendQueue().complete());
        WorkCompletion wc = RxePeer.await(c.rcq);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertEquals(42, sbuf.getLong(20480, ByteOrder.nativeOrder()));
        assertEquals(40, rb.getLong(24576, ByteOrder.nativeOrder()));
    }

    @Test
    void unsignaledInlineAndAWqeWrappingTheRing() throws Exception {
        Rc c = connect(2); // 4 WQEBBs
        for (int i = 0; i < 7; i++) {
            postRxeRecv(c.rqp, i * 256, 256, 100 + i);
        }
        fill(sbuf, 0, 64, 20);
        // two unsignaled SENDs, then a signaled inline SEND of two WQEBBs: one CQE, for the last
        c.sim.begin(Mlx5Opcode.SEND, 0, 0).data(10, skey, smem.address()).post();
        c.sim.begin(Mlx5Opcode.SEND, 0, 0).data(20, skey, smem.address()).post();
        byte[] payload = new byte[100];
        for (int i = 0; i < payload.length; i++) {
            payload[i] = (byte) (0xa0 ^ i);
        }
        int last = c.sim.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).inline(payload).post();
        assertEquals(2, last);
        assertCqe(CqeBytes.req(Mlx5Opcode.SEND, c.sim.qpn, 2, 0, UIDX, 0), c.cq.await());
        c.cq.assertEmpty(50);
        for (int i = 0; i < 3; i++) {
            WorkCompletion wc = RxePeer.await(c.rcq);
            assertEquals(WcStatus.SUCCESS, wc.status());
            assertEquals(new int[] {10, 20, 100}[i], wc.byteLen());
        }
        assertArrayEquals(payload, bytes(peer.mem.buffer(), 512, 100));
        // three one-WQEBB SENDs (slots 0, 1, 2), then an inline WQE at slot 3 that wraps to slot 0
        for (int i = 0; i < 3; i++) {
            int idx = c.sim.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).data(8, skey, smem.address()).post();
            assertCqe(CqeBytes.req(Mlx5Opcode.SEND, c.sim.qpn, idx, 0, UIDX, c.cq.lastOwner()), c.cq.await());
            RxePeer.await(c.rcq);
        }
        byte[] wrap = new byte[90];
        for (int i = 0; i < wrap.length; i++) {
            wrap[i] = (byte) (3 * i + 1);
        }
        int w = c.sim.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).inline(wrap).post();
        assertEquals(7, w); // slot 7 & 3 = 3: its second WQEBB is slot 0
        assertCqe(CqeBytes.req(Mlx5Opcode.SEND, c.sim.qpn, 7, 0, UIDX, 0), c.cq.await());
        WorkCompletion wc = RxePeer.await(c.rcq);
        assertEquals(90, wc.byteLen());
        assertArrayEquals(wrap, bytes(peer.mem.buffer(), (int) (wc.wrId() - 100) * 256, 90));
    }

    @Test
    void unreliableDatagramsBothWays() throws Exception {
        HostDriver.Cq cq = drv.createCq(5);
        DriverRings sim = drv.createQp(QpLayouts.ST_UD, cq, cq, 4, 4, 2); // 64-byte RQ WQEs
        CompletionQueue rcq = peer.own(peer.ctx.createCq(64));
        QueuePair rqp = peer.own(peer.pd.createQp(QpInitAttributes.ud(rcq, rcq).maxSendWr(16).maxRecvWr(16)));
        int qkey = 0x11111111;
        sim.toInitUd(qkey);
        sim.toRtrUd();
        sim.toRts(0);
        rqp.modify(QpAttributes.toInitUd(1, qkey));
        rqp.modify(QpAttributes.toRtrUd());
        rqp.modify(QpAttributes.toRtsUd(0));
        // sim -> rxe: the 40-byte GRH area comes first in the receive buffer
        postRxeRecv(rqp, 0, 40 + 128, 5);
        fill(sbuf, 30000, 128, 17);
        int idx = sim.begin(Mlx5Opcode.SEND, FmCeSe.CQ_UPDATE, 0).datagram(rqp.qpn(), qkey,
                InetAddress.getByName(RXE_IP)).data(128, skey, smem.address() + 30000).post();
        assertCqe(CqeBytes.req(Mlx5Opcode.SEND, sim.qpn, idx, 0, UIDX, 0), cq.await());
        WorkCompletion wc = RxePeer.await(rcq);
        assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
        assertEquals(40 + 128, wc.byteLen());
        assertEquals(sim.qpn, wc.srcQp());
        assertArrayEquals(bytes(sbuf, 30000, 128), bytes(peer.mem.buffer(), 40, 128));
        // rxe -> sim: responder CQE with the source QP and the GRH flag, L3 type IPv4
        int rq = sim.postRecv(skey, smem.address() + 32768, 40 + 64);
        fill(peer.mem.buffer(), 1024, 64, 23);
        AddressHandle ah = peer.own(peer.pd.createAh(AhAttributes.to(Gid.of(InetAddress.getByName(SIM_IP)))
                .sgidIndex(1)));
        SendWr s = new SendWr().wrId(6).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                .ud(ah, sim.qpn, qkey).sge(peer.mr, 1024, 64);
        assertEquals(1, rqp.postSend(s));
        assertEquals(WcStatus.SUCCESS, RxePeer.await(rcq).status());
        byte[] cqe = cq.await();
        assertCqe(CqeBytes.resp(CqeOpcode.RESP_SEND, sim.qpn, rq, 40 + 64, 0, 1 << 28 | rqp.qpn(), 2 << 2, UIDX,
                0), cqe);
        Cqe64 r = new Cqe64().wrap(new UnsafeBuffer(cqe), 0);
        assertEquals(rqp.qpn(), r.rqpn());
        assertEquals(Cqe64.L3_HDR_TYPE_IPV4, r.l3HdrType());
        assertArrayEquals(bytes(peer.mem.buffer(), 1024, 64), bytes(sbuf, 32768 + 40, 64));
    }

    @Test
    void remoteAccessErrorThenFlush() throws Exception {
        Rc c = connect(6);
        int rq = c.sim.postRecv(skey, smem.address() + 50000, 64);
        int bad = c.sim.begin(Mlx5Opcode.RDMA_WRITE, FmCeSe.CQ_UPDATE, 0)
                .raddr(peer.mr.address(), peer.mr.rkey() ^ 0x100).data(16, skey, smem.address()).post();
        byte[] cqe = c.cq.await();
        assertCqe(CqeBytes.err(true, Mlx5Opcode.RDMA_WRITE, c.sim.qpn, bad, CqeSyndrome.REMOTE_ACCESS_ERR,
                CqeErrors.VENDOR_TRANSPORT, UIDX, 0), cqe);
        ErrCqe e = new ErrCqe().wrap(new UnsafeBuffer(cqe), 0);
        assertEquals(CqeOpcode.REQ_ERR, e.opcode());
        assertEquals(WcStatus.REM_ACCESS_ERR, io.jhca.mlx5.cq.CqeStatus.toWcStatus(e.syndrome()));
        // the receive WQE and a later send WQE are flushed; the QP reports the error state
        byte[] flushRecv = c.cq.await();
        assertCqe(CqeBytes.err(false, 0, c.sim.qpn, rq, CqeSyndrome.WR_FLUSH_ERR, CqeErrors.VENDOR_FLUSH, UIDX, 0),
                flushRecv);
        int after = c.sim.begin(Mlx5Opcode.SEND, 0, 0).data(8, skey, smem.address()).post();
        assertCqe(CqeBytes.err(true, Mlx5Opcode.SEND, c.sim.qpn, after, CqeSyndrome.WR_FLUSH_ERR,
                CqeErrors.VENDOR_FLUSH, UIDX, 0), c.cq.await());
        assertEquals(QpLayouts.STATE_ERR, drv.queryQpState(c.sim.qpn));
    }
}
