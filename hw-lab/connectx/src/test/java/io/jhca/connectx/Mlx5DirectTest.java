package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import io.jhca.mlx5.Mlx5Direct;
import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.mlx5.ring.DirectCq;
import io.jhca.mlx5.ring.DirectSq;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.Access;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * {@link Mlx5Direct} on the ConnectX model: the provider's own QP and CQ, their queues taken over, WQEs the model's
 * data path executes, CQEs it writes; and the verbs refusing a queue that is driven directly.
 */
@Timeout(60)
class Mlx5DirectTest {

    /** RDMA WRITEs and a READ through the direct queues: every byte lands, the CQEs name the signaled WQEs. */
    @Test
    void writesAndReadsRunOnTheModel() throws Exception {
        try (SelfConnectedQp q = new SelfConnectedQp("direct0", "127.0.0.81", 64)) {
            for (int i = 0; i < 8192; i++) {
                q.mem.buffer().putByte(i, (byte) (i * 31 + 5));
            }
            DirectSq sq = Mlx5Direct.sendQueue(q.qp);
            DirectCq cq = Mlx5Direct.completionQueue(q.cq);
            assertSame(sq, Mlx5Direct.sendQueue(q.qp));
            assertSame(cq, Mlx5Direct.completionQueue(q.cq));
            long base = q.mr.address();
            int lkey = q.mr.lkey();
            int rkey = q.mr.rkey();
            int pi = sq.producer();
            for (int b = 0; b < 8; b++) {   // 8 KiB at 0 to 16 KiB, the last one signaled
                pi = sq.write(pi, b == 7 ? SendFlags.SIGNALED : 0, base + 16384 + b * 1024, rkey, lkey,
                        base + b * 1024, 1024);
            }
            sq.doorbell(pi);
            awaitCqe(cq);
            assertEquals(CqeOpcode.REQ, cq.opcode());
            assertEquals(WcStatus.SUCCESS, cq.status());
            assertEquals((pi - 1) & 0xffff, cq.wqeCounter());
            assertEquals(q.qp.qpn(), cq.qpn());
            assertEquals(Mlx5Opcode.RDMA_WRITE, cq.sendOpcode());
            sq.retire(cq.wqeCounter());
            assertEquals(0, sq.outstanding());
            assertArrayEquals(bytes(q, 0, 8192), bytes(q, 16384, 8192));

            pi = sq.read(pi, SendFlags.SIGNALED, base + 16384, rkey, lkey, base + 40960, 8192);
            sq.doorbell(pi);
            awaitCqe(cq);
            assertEquals(WcStatus.SUCCESS, cq.status());
            assertEquals(Mlx5Opcode.RDMA_READ, cq.sendOpcode());
            assertEquals(8192, cq.byteCount(), "an RDMA READ's CQE carries the bytes read");
            sq.retire(cq.wqeCounter());
            assertArrayEquals(bytes(q, 0, 8192), bytes(q, 40960, 8192));
            assertFalse(cq.poll());
        }
    }

    /**
     * SENDs to itself into receives posted through the verbs, on one CQ for both: each receive CQE gives its wr_id and
     * immediate, and a requester CQE polled after one shows none of its receive fields.
     */
    @Test
    void sendsCompleteReceivesPostedThroughTheVerbs() throws Exception {
        try (SelfConnectedQp q = new SelfConnectedQp("direct6", "127.0.0.87", 16)) {
            q.mem.buffer().putLong(0, 0x1122334455667788L);
            for (int i = 0; i < 2; i++) {
                assertEquals(1, q.qp.postRecv(new io.jhca.verbs.RecvWr().wrId(500 + i).sge(q.mr, 8192 + i * 1024, 1024)));
            }
            DirectSq sq = Mlx5Direct.sendQueue(q.qp);
            DirectCq cq = Mlx5Direct.completionQueue(q.cq);
            int pi = sq.sendImm(sq.producer(), SendFlags.SIGNALED, 0x5eed, q.mr.lkey(), q.mr.address(), 8);
            pi = sq.send(pi, SendFlags.SIGNALED, q.mr.lkey(), q.mr.address(), 4);
            sq.doorbell(pi);
            int receives = 0;
            int requests = 0;
            while (receives + requests < 4) {
                awaitCqe(cq);
                assertEquals(WcStatus.SUCCESS, cq.status());
                if (cq.opcode() == CqeOpcode.REQ) {
                    assertEquals(requests, cq.wqeCounter());
                    assertEquals(0, cq.recvWrId(), "a requester CQE has no receive");
                    assertEquals(0, cq.immediate());
                    sq.retire(cq.wqeCounter());
                    requests++;
                } else {
                    assertEquals(receives == 0 ? CqeOpcode.RESP_SEND_IMM : CqeOpcode.RESP_SEND, cq.opcode());
                    assertEquals(500 + receives, cq.recvWrId());
                    assertEquals(receives == 0 ? 8 : 4, cq.byteCount());
                    assertEquals(receives == 0 ? 0x5eed : 0, cq.immediate());
                    receives++;
                }
            }
            assertEquals(0x1122334455667788L, q.mem.buffer().getLong(8192));
            assertEquals(0x55667788, q.mem.buffer().getInt(9216), "4 bytes of the second SEND");
            assertEquals(0, sq.outstanding());
        }
    }

    /**
     * An arm of a CQ polled directly carries the direct poller's consumer index: armed after five CQEs were polled, no
     * event comes until a sixth CQE is written (an arm with an older index fires at once, the PRM's rule the model
     * follows), then one does.
     */
    @Test
    void anArmCarriesTheDirectPollersIndex() throws Exception {
        try (SelfConnectedQp q = new SelfConnectedQp("direct7", "127.0.0.88", 16, true)) {
            DirectSq sq = Mlx5Direct.sendQueue(q.qp);
            DirectCq cq = Mlx5Direct.completionQueue(q.cq);
            int pi = sq.producer();
            for (int i = 0; i < 5; i++) {
                pi = sq.write(pi, SendFlags.SIGNALED, q.mr.address() + 4096, q.mr.rkey(), q.mr.lkey(), q.mr.address(), 8);
                sq.doorbell(pi);
                awaitCqe(cq);
                sq.retire(cq.wqeCounter());
            }
            assertEquals(5, cq.consumerIndex());
            q.cq.requestNotify(false);
            assertEquals(null, q.channel.getEvent(300), "no event: nothing past the index the arm carried");
            pi = sq.write(pi, SendFlags.SIGNALED, q.mr.address() + 4096, q.mr.rkey(), q.mr.lkey(), q.mr.address(), 8);
            sq.doorbell(pi);
            assertSame(q.cq, q.channel.getEvent(20_000), "the event of the sixth CQE");
            q.cq.ackEvents(1);
            awaitCqe(cq);
            assertEquals(5, cq.wqeCounter());
        }
    }

    /** Once taken, the verbs refuse that send queue and that CQ; taking needs an empty queue. */
    @Test
    void theVerbsRefuseQueuesDrivenDirectly() throws Exception {
        try (SelfConnectedQp q = new SelfConnectedQp("direct1", "127.0.0.82", 16)) {
            q.fn.model().pauseDataPath(true);
            assertEquals(1, q.qp.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .rdma(q.mr.address() + 4096, q.mr.rkey()).sge(q.mr, 0, 8)));
            VerbsException busy = assertThrows(VerbsException.class, () -> Mlx5Direct.sendQueue(q.qp));
            assertEquals(VerbsException.EBUSY, busy.errno(), busy.getMessage());
            q.fn.model().pauseDataPath(false);
            WorkCompletion wc = new WorkCompletion();
            long until = System.nanoTime() + 20_000_000_000L;
            while (q.cq.poll(wc) == 0 && System.nanoTime() < until) {
                Thread.onSpinWait();
            }
            assertTrue(wc.isSuccess(), wc.toString());

            Mlx5Direct.sendQueue(q.qp);
            SendWr w = new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE).rdma(q.mr.address() + 4096, q.mr.rkey())
                    .sge(q.mr, 0, 8);
            assertEquals(VerbsException.EINVAL, assertThrows(VerbsException.class, () -> q.qp.postSend(w)).errno());
            assertEquals(VerbsException.EINVAL, assertThrows(VerbsException.class,
                    () -> q.qp.sendQueue().start()).errno());
            assertEquals(VerbsException.EINVAL, assertThrows(VerbsException.class,
                    () -> q.qp.modify(QpAttributes.toState(QpState.SQD))).errno());
            Mlx5Direct.completionQueue(q.cq);
            assertEquals(VerbsException.EINVAL, assertThrows(VerbsException.class, () -> q.cq.poll(wc)).errno());
        }
    }

    /** A reset invalidates the direct send queue (its counters restart at 0); taken again after RTS it works. */
    @Test
    void aResetInvalidatesAndATakeAfterRtsStartsAgain() throws Exception {
        try (SelfConnectedQp q = new SelfConnectedQp("direct2", "127.0.0.83", 16)) {
            DirectSq sq = Mlx5Direct.sendQueue(q.qp);
            DirectCq cq = Mlx5Direct.completionQueue(q.cq);
            int pi = sq.write(sq.producer(), SendFlags.SIGNALED, q.mr.address() + 4096, q.mr.rkey(), q.mr.lkey(),
                    q.mr.address(), 64);
            sq.doorbell(pi);
            awaitCqe(cq);
            sq.retire(cq.wqeCounter());
            q.qp.modify(QpAttributes.toState(QpState.RESET));
            int next = pi;
            IllegalStateException e = assertThrows(IllegalStateException.class, () -> sq.write(next, 0,
                    q.mr.address() + 4096, q.mr.rkey(), q.mr.lkey(), q.mr.address(), 64));
            assertTrue(e.getMessage().contains("reset"), e.getMessage());
            q.qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE, Access.REMOTE_READ));
            q.qp.modify(QpAttributes.toRtr(q.qp.qpn(), 0, q.path, io.jhca.verbs.Mtu.MTU_1024));
            q.qp.modify(QpAttributes.toRts(0));
            DirectSq again = Mlx5Direct.sendQueue(q.qp);
            assertEquals(0, again.producer(), "the device's counter restarted at 0");
            q.mem.buffer().putLong(128, 0x0123456789abcdefL);
            pi = again.write(again.producer(), SendFlags.SIGNALED, q.mr.address() + 8192, q.mr.rkey(), q.mr.lkey(),
                    q.mr.address() + 128, 8);
            again.doorbell(pi);
            awaitCqe(cq);
            assertEquals(0, cq.wqeCounter());
            assertEquals(0x0123456789abcdefL, q.mem.buffer().getLong(8192));
        }
    }

    /** A bad lkey: an error CQE with its syndrome, and the QP in ERR for the verbs as for the device. */
    @Test
    void aProtectionErrorIsReportedAndMovesTheQpToErr() throws Exception {
        try (SelfConnectedQp q = new SelfConnectedQp("direct3", "127.0.0.84", 16)) {
            DirectSq sq = Mlx5Direct.sendQueue(q.qp);
            DirectCq cq = Mlx5Direct.completionQueue(q.cq);
            int pi = sq.write(sq.producer(), SendFlags.SIGNALED, q.mr.address() + 4096, q.mr.rkey(),
                    q.mr.lkey() ^ 0x100, q.mr.address(), 64);
            sq.doorbell(pi);
            awaitCqe(cq);
            assertEquals(CqeOpcode.REQ_ERR, cq.opcode());
            assertEquals(WcStatus.LOC_PROT_ERR, cq.status(), "syndrome 0x" + Integer.toHexString(cq.syndrome()));
            assertEquals(0, cq.wqeCounter());
            assertEquals(QpState.ERR, q.qp.state());
            assertEquals(0L, q.mem.buffer().getLong(4096), "nothing read through a bad lkey");
        }
    }

    /** Use after close: the destroyed QP's queue and the destroyed CQ refuse, with an exception, not a crash. */
    @Test
    void queuesOfClosedResourcesRefuse() throws Exception {
        SelfConnectedQp q = new SelfConnectedQp("direct4", "127.0.0.85", 16);
        DirectSq sq = Mlx5Direct.sendQueue(q.qp);
        DirectCq cq = Mlx5Direct.completionQueue(q.cq);
        q.close();
        int pi = sq.producer();
        assertThrows(IllegalStateException.class, () -> sq.write(pi, 0, 0x1000, 1, 2, 0x2000, 8));
        assertThrows(IllegalStateException.class, () -> sq.doorbell(pi + 1));
        assertThrows(IllegalStateException.class, cq::poll);
        assertThrows(VerbsException.class, () -> Mlx5Direct.sendQueue(q.qp));
    }

    /** A write, its doorbell, its CQE polled and retired: the thread doing it allocates nothing, round after round. */
    @Test
    void theDirectRoundTripAllocatesNothing() throws Exception {
        try (SelfConnectedQp q = new SelfConnectedQp("direct5", "127.0.0.86", 64)) {
            DirectSq sq = Mlx5Direct.sendQueue(q.qp);
            DirectCq cq = Mlx5Direct.completionQueue(q.cq);
            com.sun.management.ThreadMXBean threads =
                    (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
            long id = Thread.currentThread().getId();
            long base = q.mr.address();
            int lkey = q.mr.lkey();
            int rkey = q.mr.rkey();
            StringBuilder seen = new StringBuilder();
            boolean clean = false;
            for (int round = 0; round < 10 && !(clean && round >= 3); round++) {
                long before = threads.getThreadAllocatedBytes(id);
                for (int i = 0; i < 2000; i++) {
                    int pi = sq.write(sq.producer(), SendFlags.SIGNALED, base + 4096, rkey, lkey, base, 64);
                    sq.doorbell(pi);
                    awaitCqe(cq);
                    sq.retire(cq.wqeCounter());
                }
                long bytes = threads.getThreadAllocatedBytes(id) - before;
                seen.append(bytes).append(' ');
                clean |= bytes == 0;
            }
            // the first rounds may see the JIT's own allocation on this thread's account (as in the verbs' test)
            assertTrue(clean, "bytes allocated per round of 2000 direct round trips: " + seen);
        }
    }

    private static void awaitCqe(DirectCq cq) {
        long until = System.nanoTime() + 20_000_000_000L;
        while (!cq.poll()) {
            if (System.nanoTime() > until) {
                throw new AssertionError("no CQE in 20 s");
            }
            Thread.onSpinWait();
        }
    }

    private static byte[] bytes(SelfConnectedQp q, int offset, int length) {
        byte[] out = new byte[length];
        q.mem.buffer().getBytes(offset, out);
        return out;
    }
}
