package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;

import org.junit.jupiter.api.Test;

import io.jhca.rxe.transport.RxeCounters;
import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/** Device and QP counters, exactly, and through the provider-neutral statistics API. */
class CountersTest {

    private static RxeCounters of(final QueuePair qp) {
        return ((RxeQp) qp).counters();
    }

    @Test
    void packetsAndBytesEachWayPerDeviceAndPerQp() {
        // no retransmit timer (timeout 0): a descheduled test thread cannot add a retransmission to the counts
        try (Rig r = new Rig(Rig.config("cntA", ProgressMode.CALLER).build(), Rig.config("cntB", ProgressMode.CALLER).build(),
                io.jhca.verbs.QpType.RC, 1 << 16, Mtu.MTU_1024, i -> i, 0)) {
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 4096).rdma(r.mrB.address(), r.mrB.rkey()));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            // FIRST: BTH 12 + RETH 16 + 1024 + ICRC 4; MIDDLE, MIDDLE, LAST: 12 + 1024 + 4; one ACK: 12 + AETH 4 + 4
            final long write = 1056 + 3 * 1040;
            final long ack = 20;
            for (final RxeCounters c : new RxeCounters[] {of(r.qpA), r.a.counters()}) {
                assertEquals(4, c.get(Counter.SENT_PKTS));
                assertEquals(write, c.get(Counter.SENT_BYTES));
                assertEquals(1, c.get(Counter.RCVD_PKTS));
                assertEquals(ack, c.get(Counter.RCVD_BYTES));
                assertEquals(0, c.get(Counter.RETRANSMITTED_PKTS));
            }
            for (final RxeCounters c : new RxeCounters[] {of(r.qpB), r.b.counters()}) {
                assertEquals(4, c.get(Counter.RCVD_PKTS));
                assertEquals(write, c.get(Counter.RCVD_BYTES));
                assertEquals(1, c.get(Counter.SENT_PKTS));
                assertEquals(ack, c.get(Counter.SENT_BYTES));
            }
            final Map<String, Long> dev = r.a.statistics();
            assertEquals(r.a.counters().snapshot(), dev);
            assertEquals(write, dev.get("sent_bytes"));
            final Map<String, Long> qp = r.qpA.statistics();
            assertEquals(4L, qp.get("sent_pkts"));
            assertTrue(qp.containsKey("drop_ghost_response"));
            assertFalse(qp.containsKey("drop_truncated"), "dropped before any QP is known: a device counter");
            assertEquals("sent_pkts", dev.keySet().iterator().next(), "in the provider's order");
        }
    }

    @Test
    void requestsReceivedByKind() {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024)) {
            // a multi-packet WRITE is one request; a READ and an atomic one each
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 4096).rdma(r.mrB.address(), r.mrB.rkey()));
            r.qpA.postSend(new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 8).rdma(r.mrB.address(), r.mrB.rkey()));
            r.qpA.postSend(new SendWr().wrId(3).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 64).rdma(r.mrB.address(), r.mrB.rkey()));
            r.qpA.postSend(new SendWr().wrId(4).opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 8).atomic(r.mrB.address(), r.mrB.rkey(), 1, 0));
            for (int id = 1; id <= 4; id++) {
                r.expect(r.cqA, id, WcStatus.SUCCESS);
            }
            assertEquals(2, of(r.qpB).get(Counter.RX_WRITE_REQUESTS));
            assertEquals(1, of(r.qpB).get(Counter.RX_READ_REQUESTS));
            assertEquals(1, of(r.qpB).get(Counter.RX_ATOMIC_REQUESTS));
            assertEquals(0, of(r.qpA).get(Counter.RX_WRITE_REQUESTS), "the requester received none");
            assertEquals(2L, r.qpB.statistics().get("rx_write_requests"));
        }
    }

    @Test
    void timeoutsAndRetransmissions() {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024);
             QueuePair a = r.pdA.createQp(QpInitAttributes.rc(r.cqA, r.cqA))) {
            a.modify(QpAttributes.toInit(1));
            final Gid nobody = Gid.parse("0000:0000:0000:0000:0000:ffff:7f0b:fffe"); // nothing listens there
            a.modify(QpAttributes.toRtr(0x77, 0, AhAttributes.to(nobody).sgidIndex(1), Mtu.MTU_1024));
            a.modify(QpAttributes.toRts(0).timeout(4).retryCnt(2));
            a.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 64));
            r.expect(r.cqA, 1, WcStatus.RETRY_EXC_ERR);
            final RxeCounters c = of(a);
            assertEquals(3, c.get(Counter.SENT_PKTS), "first try + 2 retries");
            assertEquals(2, c.get(Counter.RETRANSMITTED_PKTS));
            assertEquals(3, c.get(Counter.LOCAL_ACK_TIMEOUT_ERR), "two retries, then the one that gives up");
            assertEquals(1, c.get(Counter.RETRY_EXCEEDED_ERR));
            assertEquals(0, of(r.qpA).get(Counter.SENT_PKTS), "another QP's counters");
            assertEquals(2, r.a.counters().get(Counter.RETRANSMITTED_PKTS));
        }
    }

    @Test
    void naksByKindBothWays() throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024); Forger peer = new Forger(r.a, r.b)) {
            // a request far ahead of the expected PSN: one PSN-sequence NAK (it goes to A, which goes back N)
            peer.readRequest(r.qpB.qpn(), 0x2000 + 5, r.mrB.address(), r.mrB.rkey(), 8);
            r.await(() -> of(r.qpB).get(Counter.SENT_NAK_SEQ_ERR) > 0, "the PSN sequence NAK");
            assertEquals(1, of(r.qpB).get(Counter.OUT_OF_SEQUENCE));
            // a bad rkey: remote access NAK
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 8).rdma(r.mrB.address(), r.mrB.rkey() ^ 1));
            r.expect(r.cqA, 1, WcStatus.REM_ACCESS_ERR);
            assertEquals(1, of(r.qpB).get(Counter.SENT_NAK_REM_ACCESS));
            assertEquals(1, of(r.qpA).get(Counter.RCVD_NAK_REM_ACCESS));
            assertEquals(0, of(r.qpA).get(Counter.RCVD_NAK_INV_REQ) + of(r.qpB).get(Counter.SENT_NAK_INV_REQ));
            assertEquals(1, r.b.counters().get(Counter.SENT_NAK_REM_ACCESS));
            assertEquals(1, of(r.qpB).get(Counter.RX_WRITE_REQUESTS), "a request that reached B, though refused");
        }
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024);
             QueuePair a = r.pdA.createQp(QpInitAttributes.rc(r.cqA, r.cqA));
             QueuePair b = r.pdB.createQp(QpInitAttributes.rc(r.cqB, r.cqB))) {
            ErrorPathTest.connect(a, r.a, b, r.b, 0, 7, 7, 10); // no remote access at B: invalid request
            ErrorPathTest.connect(b, r.b, a, r.a, 0, 7, 7, 10);
            a.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 8).rdma(r.mrB.address(), r.mrB.rkey()));
            r.expect(r.cqA, 1, WcStatus.REM_INV_REQ_ERR);
            assertEquals(1, of(b).get(Counter.SENT_NAK_INV_REQ));
            assertEquals(1, of(a).get(Counter.RCVD_NAK_INV_REQ));
        }
    }

    @Test
    void sendsRetiredAndReceivesConsumed() {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024)) {
            for (int i = 0; i < 3; i++) {
                r.qpB.postRecv(new RecvWr().wrId(100 + i).sge(r.mrB, 0, 8192));
            }
            // rxe counts a SEND when its completer retires it, signaled or not, and a receive WQE consumed with
            // success (a WRITE with immediate consumes one too); a plain WRITE is neither
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sge(r.mrA, 0, 3000));
            r.qpA.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND_WITH_IMM).immData(7).sge(r.mrA, 0, 8));
            r.qpA.postSend(new SendWr().wrId(3).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immData(8).sge(r.mrA, 0, 8)
                    .rdma(r.mrB.address() + 16384, r.mrB.rkey()));
            r.qpA.postSend(new SendWr().wrId(4).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, 8).rdma(r.mrB.address() + 16384, r.mrB.rkey()));
            r.expect(r.cqA, 4, WcStatus.SUCCESS);
            for (int i = 0; i < 3; i++) {
                r.expect(r.cqB, 100 + i, WcStatus.SUCCESS);
            }
            assertEquals(2, of(r.qpA).get(Counter.RDMA_SENDS));
            assertEquals(0, of(r.qpA).get(Counter.RDMA_RECVS));
            assertEquals(3, of(r.qpB).get(Counter.RDMA_RECVS));
            assertEquals(0, of(r.qpB).get(Counter.RDMA_SENDS));
            assertEquals(2L, r.a.statistics().get("rdma_sends"));
            assertEquals(3L, r.qpB.statistics().get("rdma_recvs"));
        }
    }
}
