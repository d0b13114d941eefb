package io.jhca.tests.qp;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.RcParams;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.Access;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttrMask;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The QP state machine on real providers (rdma-core tests/test_qp.py): the full legal path, refusals naming
 * what is wrong and leaving the QP as it was, and the flushes a move to ERR causes.
 */
class QpStateMachineTest {
    private static final int ALL_REMOTE = Access.mask(Access.REMOTE_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC);

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void rcFullPathAndBackToWork(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            RcParams p = RcParams.defaults();
            Mtu mtu = h.activeMtu();
            QueuePair qp = a.qp();
            expect(qp, QpState.RESET);
            a.toInit(ALL_REMOTE);
            expect(qp, QpState.INIT);
            assertEquals(ALL_REMOTE, qp.query().accessFlags(), "query() reports the access flags");
            a.toRtr(b, mtu, p);
            expect(qp, QpState.RTR);
            assertEquals(b.qpn(), qp.query().destQpn(), "query() reports dest_qp_num");
            assertEquals(mtu, qp.query().pathMtu(), "query() reports path_mtu");
            a.toRts(p);
            expect(qp, QpState.RTS);
            assertEquals(a.psn(), qp.query().sqPsn(), "query() reports sq_psn");
            qp.modify(QpAttributes.toState(QpState.SQD));
            expect(qp, QpState.SQD);
            qp.modify(QpAttributes.toState(QpState.RTS));
            expect(qp, QpState.RTS);
            qp.modify(QpAttributes.toState(QpState.ERR));
            expect(qp, QpState.ERR);
            qp.modify(QpAttributes.toState(QpState.RESET));
            expect(qp, QpState.RESET);

            // After RESET the QP is as new: connect both sides again and move data.
            b.qp().modify(QpAttributes.toState(QpState.RESET));
            h.connect(a, b, p);
            Payloads.fill(a.buf(), 0, 3000, 7);
            b.postRecv(1, 0, 4096);
            a.post(a.wr(2, WrOpcode.SEND, 0, 3000));
            Wcs.assertSuccess(h.await(a.sendCq(), "SEND after reconnect"), WcOpcode.SEND, 2, a.qpn(), "send");
            Wcs.assertRecv(h.await(b.recvCq(), "RECV after reconnect"), WcOpcode.RECV, 1, b.qpn(), 3000, null, "recv");
            Payloads.assertPayload(b.buf(), 0, 3000, 7, "payload after reconnect");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void udFullPath(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.ud());
            QueuePair qp = a.qp();
            qp.modify(QpAttributes.toInitUd(1, Peer.QKEY));
            expect(qp, QpState.INIT);
            assertEquals(Peer.QKEY, qp.query().qkey());
            qp.modify(QpAttributes.toRtrUd());
            expect(qp, QpState.RTR);
            qp.modify(QpAttributes.toRtsUd(a.psn()));
            expect(qp, QpState.RTS);
            qp.modify(QpAttributes.toState(QpState.SQD));
            expect(qp, QpState.SQD);
            qp.modify(QpAttributes.toState(QpState.RTS));
            qp.modify(QpAttributes.toState(QpState.ERR));
            expect(qp, QpState.ERR);
            qp.modify(QpAttributes.toState(QpState.RESET));
            expect(qp, QpState.RESET);
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void illegalModifiesAreRefusedNamingTheProblem(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            QueuePair qp = a.qp();
            RcParams p = RcParams.defaults();
            Mtu mtu = h.activeMtu();

            refused(qp, QpAttributes.toState(QpState.RTR), QpState.RESET, "illegal transition");
            refused(qp, QpAttributes.toState(QpState.ERR), QpState.RESET, "illegal transition");
            refused(qp, new QpAttributes().state(QpState.INIT).pkeyIndex(0).accessFlags(0), QpState.RESET, "PORT");
            refused(qp, QpAttributes.toInit(1).accessFlags(0).qkey(5), QpState.RESET, "QKEY");
            refused(qp, QpAttributes.toInit(1).accessFlags(0).port(9), QpState.RESET, "port");
            a.toInit(ALL_REMOTE);

            QpAttributes rtr = QpAttributes.toRtr(b.qpn(), b.psn(), a.avTo(b), mtu);
            refused(qp, rtr.copy().without(QpAttrMask.DEST_QPN), QpState.INIT, "DEST_QPN");
            refused(qp, rtr.copy().without(QpAttrMask.AV), QpState.INIT, "AV");
            refused(qp, rtr.copy().without(QpAttrMask.PATH_MTU | QpAttrMask.RQ_PSN), QpState.INIT, "PATH_MTU|RQ_PSN");
            refused(qp, rtr.copy().sqPsn(1), QpState.INIT, "SQ_PSN");
            refused(qp, rtr.copy().destQpn(1 << 24), QpState.INIT, "dest_qp_num");
            refused(qp, QpAttributes.toState(QpState.RTS), QpState.INIT, "illegal transition");
            a.toRtr(b, mtu, p);

            refused(qp, QpAttributes.toRts(a.psn()).without(QpAttrMask.TIMEOUT), QpState.RTR, "TIMEOUT");
            refused(qp, QpAttributes.toRts(a.psn()).timeout(32), QpState.RTR, "timeout");
            refused(qp, QpAttributes.toRts(a.psn()).retryCnt(8), QpState.RTR, "retry_cnt");
            refused(qp, QpAttributes.toRts(a.psn()).destQpn(b.qpn()), QpState.RTR, "DEST_QPN");
            refused(qp, QpAttributes.toRts(a.psn()).curState(QpState.INIT), QpState.RTR, "cur_state");
            a.toRts(p);

            refused(qp, QpAttributes.toState(QpState.RTR), QpState.RTS, "illegal transition");
            refused(qp, QpAttributes.toState(QpState.INIT), QpState.RTS, "illegal transition");
            refused(qp, new QpAttributes().pathMtu(Mtu.MTU_256), QpState.RTS, "PATH_MTU");
            refused(qp, QpAttributes.toState(QpState.SQE), QpState.RTS, "illegal transition");
            // A legal RTS->RTS modify of an optional attribute.
            qp.modify(new QpAttributes().minRnrTimer(3));
            expect(qp, QpState.RTS);
            assertEquals(3, qp.query().minRnrTimer());
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void errFlushesPostedReceivesInOrder(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors(); // flushes are error CQEs
            Peer a = h.peerA(PeerSpec.rc());
            a.toInit(ALL_REMOTE);
            for (int i = 0; i < 5; i++) {
                a.postRecv(100 + i, i * 256L, 256);
            }
            h.assertNoCompletion(a.recvCq(), Duration.ofMillis(50), "receives wait in INIT");
            a.qp().modify(QpAttributes.toState(QpState.ERR));
            WorkCompletion[] wcs = h.await(a.recvCq(), 5, "flushed receives");
            for (int i = 0; i < 5; i++) {
                Wcs.assertStatus(wcs[i], WcStatus.WR_FLUSH_ERR, 100 + i, a.qpn(), "receive " + i + " flushed by modify to ERR");
            }
            // Posting in ERR completes at once with a flush, receives and sends alike.
            a.postRecv(200, 0, 64);
            Wcs.assertStatus(h.await(a.recvCq(), "receive posted in ERR"), WcStatus.WR_FLUSH_ERR, 200, a.qpn(), "receive posted in ERR");
            a.post(a.wr(201, WrOpcode.SEND, 0, 64));
            Wcs.assertStatus(h.await(a.sendCq(), "send posted in ERR"), WcStatus.WR_FLUSH_ERR, 201, a.qpn(), "send posted in ERR");
            h.assertNoCompletion(a.recvCq(), Duration.ofMillis(20), "nothing else completes");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void errFlushesSendsStuckOnRnr(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors(); // flushes are error CQEs
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            // No receive is posted at B and rnr_retry 7 retries forever: the SENDs stay queued at A.
            h.connect(a, b, RcParams.defaults().rnrRetry(7).minRnrTimer(1));
            for (int i = 0; i < 4; i++) {
                a.post(a.wr(10 + i, WrOpcode.SEND, 0, 100));
            }
            h.assertNoCompletion(a.sendCq(), Duration.ofMillis(100), "SENDs wait on RNR NAKs");
            a.qp().modify(QpAttributes.toState(QpState.ERR));
            WorkCompletion[] wcs = h.await(a.sendCq(), 4, "flushed sends");
            for (int i = 0; i < 4; i++) {
                Wcs.assertStatus(wcs[i], WcStatus.WR_FLUSH_ERR, 10 + i, a.qpn(), "send " + i + " flushed by modify to ERR");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void sqdHoldsNewSendsUntilRts(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            b.postRecv(1, 0, 1024);
            a.qp().modify(QpAttributes.toState(QpState.SQD));
            Payloads.fill(a.buf(), 0, 512, 3);
            a.post(a.wr(5, WrOpcode.SEND, 0, 512));
            // IBTA 10.3.1: in SQD the send queue is drained and new WRs are not processed.
            h.assertNoCompletion(b.recvCq(), Duration.ofMillis(200), "a SEND posted in SQD must wait for RTS");
            a.qp().modify(QpAttributes.toState(QpState.RTS));
            Wcs.assertSuccess(h.await(a.sendCq(), "SEND released by SQD->RTS"), WcOpcode.SEND, 5, a.qpn(), "send");
            Wcs.assertRecv(h.await(b.recvCq(), "RECV"), WcOpcode.RECV, 1, b.qpn(), 512, null, "recv");
            Payloads.assertPayload(b.buf(), 0, 512, 3, "payload");
        }
    }

    private static void expect(QueuePair qp, QpState s) {
        assertEquals(s, qp.state(), qp.describe() + " state");
        assertEquals(s, qp.query().state(), qp.describe() + " state reported by query()");
    }

    /** The modify is refused with EINVAL naming {@code named}, and the QP stays in {@code stays}. */
    private static void refused(QueuePair qp, QpAttributes attr, QpState stays, String named) {
        VerbsException e = assertThrows(VerbsException.class, () -> qp.modify(attr), attr + " from " + stays);
        assertEquals(VerbsException.EINVAL, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains(named), "the refusal names '" + named + "': " + e.getMessage());
        expect(qp, stays);
    }
}
