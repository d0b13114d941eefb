package io.jhca.tests.traffic;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.RcParams;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Unsignaled WRs, sq_sig_all, builder batches with one doorbell, and a full send queue as a return value. */
class SignalingAndBatchTest {

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void unsignaledWrsCompleteSilently(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            for (int i = 0; i < 10; i++) {
                b.postRecv(100 + i, i * 1024L, 1024);
                Payloads.fill(a.buf(), i * 1024, 700 + i, i);
            }
            for (int i = 0; i < 10; i++) {
                a.post(new SendWr().wrId(i).opcode(WrOpcode.SEND).sendFlags(i == 9 ? SendFlags.SIGNALED : 0)
                        .sge(a.mr(), i * 1024L, 700 + i));
            }
            Wcs.assertSuccess(h.await(a.sendCq(), "the one signaled SEND"), WcOpcode.SEND, 9, a.qpn(), "signaled send");
            WorkCompletion[] r = h.await(b.recvCq(), 10, "ten receives");
            for (int i = 0; i < 10; i++) {
                Wcs.assertRecv(r[i], WcOpcode.RECV, 100 + i, b.qpn(), 700 + i, null, "receive " + i);
                Payloads.assertPayload(b.buf(), i * 1024, 700 + i, i, "message " + i);
            }
            h.assertNoCompletion(a.sendCq(), Duration.ofMillis(50), "unsignaled WRs produce no completion");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void sqSigAllSignalsEveryWr(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().sqSigAll(true));
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            SendQueue sq = a.qp().sendQueue().start();
            sq.flags(0);
            for (int i = 0; i < 5; i++) {
                sq.wrId(i).rdmaWrite(b.mr().rkey(), b.addr(i * 64L)).sge(a.mr(), i * 64L, 64);
            }
            assertEquals(0, sq.complete());
            WorkCompletion[] wcs = h.await(a.sendCq(), 5, "five unsignaled WRITEs on an sq_sig_all QP");
            for (int i = 0; i < 5; i++) {
                Wcs.assertSuccess(wcs[i], WcOpcode.RDMA_WRITE, i, a.qpn(), "write " + i);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void builderBatchOfMixedWrs(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().maxSendWr(64).bufferBytes(1 << 20));
            Peer b = h.peerB(PeerSpec.rc().maxRecvWr(64).bufferBytes(1 << 20));
            h.connect(a, b);
            int n = 32;
            int len = 3000;
            WrOpcode[] ops = {WrOpcode.RDMA_WRITE, WrOpcode.SEND, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ};
            for (int i = 0; i < n; i++) {
                long slot = i * 4096L;
                if (ops[i % 4] == WrOpcode.RDMA_READ) {
                    Payloads.fill(b.buf(), (int) (512 * 1024 + slot), len, i);
                } else {
                    Payloads.fill(a.buf(), (int) slot, len, i);
                }
                if (ops[i % 4] == WrOpcode.SEND || ops[i % 4] == WrOpcode.RDMA_WRITE_WITH_IMM) {
                    b.postRecv(i, slot, 4096);
                }
            }
            SendQueue sq = a.qp().sendQueue().start();
            for (int i = 0; i < n; i++) {
                long slot = i * 4096L;
                sq.wrId(i).flags(SendFlags.SIGNALED);
                switch (ops[i % 4]) {
                    case RDMA_WRITE -> sq.rdmaWrite(b.mr().rkey(), b.addr(slot));
                    case SEND -> sq.send();
                    case RDMA_WRITE_WITH_IMM -> sq.rdmaWriteImm(b.mr().rkey(), b.addr(slot), i);
                    default -> sq.rdmaRead(b.mr().rkey(), b.addr(512 * 1024 + slot));
                }
                sq.sge(a.mr(), slot, len);
            }
            assertEquals(0, sq.complete(), "one doorbell for the batch");
            WorkCompletion[] wcs = h.await(a.sendCq(), n, "the batch's completions");
            for (int i = 0; i < n; i++) {
                Wcs.assertSuccess(wcs[i], ops[i % 4].completionOpcode(), i, a.qpn(), "WR " + i + " " + ops[i % 4]);
            }
            WorkCompletion[] r = h.await(b.recvCq(), n / 2, "receives of the batch");
            int k = 0;
            for (int i = 0; i < n; i++) {
                WrOpcode op = ops[i % 4];
                if (op == WrOpcode.SEND || op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                    Wcs.assertRecv(r[k++], op == WrOpcode.SEND ? WcOpcode.RECV : WcOpcode.RECV_RDMA_WITH_IMM, i, b.qpn(), len,
                            op == WrOpcode.SEND ? null : i, "receive for WR " + i + " " + op);
                }
            }
            for (int i = 0; i < n; i++) {
                if (ops[i % 4] == WrOpcode.RDMA_READ) {
                    Payloads.assertPayload(a.buf(), i * 4096, len, i, "READ " + i);
                } else {
                    Payloads.assertPayload(b.buf(), i * 4096, len, i, ops[i % 4] + " " + i);
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void aChainWithARefusedWrPostsNothingWhereverTheWrIs(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().maxSendWr(8));
            Peer b = h.peerB(PeerSpec.rc().maxRecvWr(64));
            h.connect(a, b);
            int n = a.qp().capabilities().maxSendWr();
            // n + 2 common SENDs; one at a time carries an unknown flag: first, in the middle, the last that fits
            // the queue, and beyond it (checked though never posted)
            SendWr[] chain = new SendWr[n + 2];
            for (int i = chain.length - 1; i >= 0; i--) {
                chain[i] = new SendWr().wrId(i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                        .sge(a.mr(), i * 64L, 32).next(i + 1 < chain.length ? chain[i + 1] : null);
            }
            for (int bad : new int[] {0, n / 2, n - 1, n + 1}) {
                chain[bad].sendFlags(SendFlags.SIGNALED | 0x100);
                String where = "a refused WR at " + bad + " of a chain of " + chain.length + " into a queue of " + n;
                try {
                    a.qp().postSend(chain[0]);
                    throw new AssertionError(where + ": posted");
                } catch (VerbsException e) {
                    assertEquals(VerbsException.EINVAL, e.errno(), where);
                }
                chain[bad].sendFlags(SendFlags.SIGNALED);
            }
            h.assertNoCompletion(a.sendCq(), Duration.ofMillis(50), "nothing of the refused chains was sent");
            for (int i = 0; i < n; i++) {
                b.postRecv(100 + i, i * 64L, 64);
            }
            assertEquals(n, a.qp().postSend(chain[0]), "the same chain, all WRs good: the queue's n");
            WorkCompletion[] wcs = h.await(a.sendCq(), n, "the chain's SENDs");
            WorkCompletion[] r = h.await(b.recvCq(), n, "their receives");
            for (int i = 0; i < n; i++) {
                Wcs.assertSuccess(wcs[i], WcOpcode.SEND, i, a.qpn(), "send " + i);
                Wcs.assertRecv(r[i], WcOpcode.RECV, 100 + i, b.qpn(), 32, null, "receive " + i);
            }
            h.assertNoCompletion(b.recvCq(), Duration.ofMillis(50), "exactly the posted WRs arrived");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void aChainWithAnUncommonWrPostsEachWrOnce(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().maxSendWr(16));
            Peer b = h.peerB(PeerSpec.rc().maxRecvWr(64));
            h.connect(a, b);
            int n = 8;
            // n SENDs of one SGE, one at a time with two (valid, but not the common WR a provider may write as it
            // checks): first, in the middle, last. Every WR is sent once, in order, with its own bytes.
            for (int odd : new int[] {0, n / 2, n - 1}) {
                for (int i = 0; i < n; i++) {
                    Payloads.fill(a.buf(), i * 256, 100 + i, odd * n + i);
                    b.postRecv(1000 + odd * n + i, i * 256L, 256);
                }
                SendWr[] chain = new SendWr[n];
                for (int i = n - 1; i >= 0; i--) {
                    int id = odd * n + i;
                    chain[i] = new SendWr().wrId(id).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                            .sge(a.mr(), i * 256L, 100 + i).next(i + 1 < n ? chain[i + 1] : null);
                }
                chain[odd].numSge(2);
                chain[odd].sge(0).set(a.mr(), odd * 256L, 40);
                chain[odd].sge(1).set(a.mr(), odd * 256L + 40, 100 + odd - 40);
                String where = "two SGEs in WR " + odd + " of " + n;
                assertEquals(n, a.qp().postSend(chain[0]), where);
                WorkCompletion[] wcs = h.await(a.sendCq(), n, where + ": the SENDs");
                WorkCompletion[] r = h.await(b.recvCq(), n, where + ": their receives");
                for (int i = 0; i < n; i++) {
                    int id = odd * n + i;
                    Wcs.assertSuccess(wcs[i], WcOpcode.SEND, id, a.qpn(), where + ": send " + i);
                    Wcs.assertRecv(r[i], WcOpcode.RECV, 1000 + id, b.qpn(), 100 + i, null, where + ": receive " + i);
                    Payloads.assertPayload(b.buf(), i * 256, 100 + i, id, where + ": message " + i);
                }
                h.assertNoCompletion(b.recvCq(), Duration.ofMillis(20), where + ": nothing sent twice");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void fullSendQueueIsAReturnValue(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().maxSendWr(8));
            Peer b = h.peerB(PeerSpec.rc().maxRecvWr(64));
            // B posts no receive yet and rnr_retry 7 retries forever, so A's SENDs stay in its send queue.
            h.connect(a, b, RcParams.defaults().rnrRetry(7));
            int n = a.qp().capabilities().maxSendWr();
            SendWr head = null;
            for (int i = n + 2; i >= 0; i--) {
                head = new SendWr().wrId(i).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(a.mr(), 0, 32).next(head);
            }
            assertEquals(n, a.qp().postSend(head), "a chain of " + (n + 3) + " WRs into a queue of " + n);
            SendQueue sq = a.qp().sendQueue().start();
            sq.wrId(500).flags(SendFlags.SIGNALED).send().sge(a.mr(), 0, 8);
            assertEquals(VerbsException.ENOMEM, sq.complete(), "a batch into a full queue");
            for (int i = 0; i < n; i++) {
                b.postRecv(i, i * 64L, 64);
            }
            WorkCompletion[] wcs = h.await(a.sendCq(), n, "the queued SENDs once B has receives");
            for (int i = 0; i < n; i++) {
                Wcs.assertSuccess(wcs[i], WcOpcode.SEND, i, a.qpn(), "send " + i);
            }
            h.await(b.recvCq(), n, "receives");
            h.assertNoCompletion(b.recvCq(), Duration.ofMillis(50), "nothing of the refused batch or the chain's tail arrived");
            b.postRecv(600, 0, 64);
            sq.start();
            sq.wrId(501).flags(SendFlags.SIGNALED).send().sge(a.mr(), 0, 8);
            assertEquals(0, sq.complete(), "a batch once there is room");
            Wcs.assertSuccess(h.await(a.sendCq(), "send after the queue drained"), WcOpcode.SEND, 501, a.qpn(), "send");
            // The drained queue takes n of the chain again: its free slots counted from the
            // completions retired since the last post, not from what the queue held then.
            for (SendWr w = head; w != null; w = w.next()) {
                w.wrId(w.wrId() + 1000);
            }
            assertEquals(n, a.qp().postSend(head), "a chain of " + (n + 3) + " WRs into the drained queue of " + n);
            for (int i = 0; i < n; i++) {
                b.postRecv(700 + i, i * 64L, 64);
            }
            wcs = h.await(a.sendCq(), n, "the second chain's SENDs");
            for (int i = 0; i < n; i++) {
                Wcs.assertSuccess(wcs[i], WcOpcode.SEND, 1000 + i, a.qpn(), "second chain's send " + i);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void fullReceiveQueueIsAReturnValue(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc().maxRecvWr(8));
            h.connect(a, b);
            int n = b.qp().capabilities().maxRecvWr();
            RecvWr head = null;
            for (int i = n + 2; i >= 0; i--) {
                head = new RecvWr(1).wrId(i).sge(b.mr(), i * 64L, 64).next(head);
            }
            assertEquals(n, b.qp().postRecv(head), "a chain of " + (n + 3) + " receive WRs into a queue of " + n);
            assertEquals(0, b.qp().postRecv(new RecvWr(1).wrId(100).sge(b.mr(), 0, 64)), "one more into the full queue");
            a.post(a.wr(0, WrOpcode.SEND, 0, 16));
            Wcs.assertSuccess(h.await(a.sendCq(), "the SEND"), WcOpcode.SEND, 0, a.qpn(), "send");
            Wcs.assertRecv(h.await(b.recvCq(), "its receive"), WcOpcode.RECV, 0, b.qpn(), 16, null, "the first receive");
            RecvWr two = new RecvWr(1).wrId(101).sge(b.mr(), 0, 64).next(new RecvWr(1).wrId(102).sge(b.mr(), 64, 64));
            assertEquals(1, b.qp().postRecv(two), "a chain of two once one receive completed: exactly one slot");
            for (int i = 1; i <= n; i++) {
                a.post(a.wr(i, WrOpcode.SEND, 0, 16));
                Wcs.assertSuccess(h.await(a.sendCq(), "SEND " + i), WcOpcode.SEND, i, a.qpn(), "send " + i);
                Wcs.assertRecv(h.await(b.recvCq(), "receive " + i), WcOpcode.RECV, i < n ? i : 101, b.qpn(), 16, null,
                        "receive " + i + " in posting order, the refused WRs never");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void aSlotIsFreeOnceItsCompletionIsPolled(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().maxSendWr(16).cqDepth(64));
            Peer b = h.peerB(PeerSpec.rc().maxRecvWr(16).cqDepth(64));
            h.connect(a, b);
            int sends = a.qp().capabilities().maxSendWr();
            int recvs = b.qp().capabilities().maxRecvWr();
            // Both queues kept completely full: each polled completion frees exactly the slot reposted next
            // (verbs: a WR is retired before its completion is visible, so the repost must never find the queue full).
            for (int i = 0; i < recvs; i++) {
                b.postRecv(i, (i % 16) * 64L, 64);
            }
            int posted = 0;
            for (; posted < sends; posted++) {
                a.post(a.wr(posted, WrOpcode.SEND, 0, 16));
            }
            int messages = 10_000;
            int received = 0;
            int reposted = recvs;
            int completed = 0;
            WorkCompletion wc = new WorkCompletion();
            long deadline = System.nanoTime() + Harness.DEFAULT_WAIT.toNanos();
            // Poll both CQs as fast as they fill and re-post at once, so completions are polled the moment the
            // engine publishes them.
            while (completed < messages || received < messages) {
                boolean any = false;
                if (a.sendCq().poll(wc) == 1) {
                    any = true;
                    Wcs.assertSuccess(wc, WcOpcode.SEND, completed, a.qpn(), "send " + completed);
                    completed++;
                    if (posted < messages) {
                        assertEquals(1, a.qp().postSend(a.wr(posted, WrOpcode.SEND, 0, 16)),
                                "re-posting into the send slot whose completion (wr_id " + wc.wrId() + ") was just polled");
                        posted++;
                    }
                }
                if (b.recvCq().poll(wc) == 1) {
                    any = true;
                    Wcs.assertRecv(wc, WcOpcode.RECV, received, b.qpn(), 16, null, "receive " + received);
                    received++;
                    assertEquals(1, b.qp().postRecv(new RecvWr(1).wrId(reposted).sge(b.mr(), (reposted % 16) * 64L, 64)),
                            "re-posting into the receive slot whose completion (wr_id " + wc.wrId() + ") was just polled");
                    reposted++;
                }
                if (!any) {
                    if (System.nanoTime() - deadline > 0) {
                        throw new AssertionError("stalled: " + completed + " sends and " + received + " receives completed of " + messages);
                    }
                    h.progress();
                }
            }
        }
    }
}
