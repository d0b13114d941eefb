package io.jhca.tests.errors;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.RcParams;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.Access;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.QpState;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Error paths: each error is a completion with the status verbs gives, the QP moves to ERR, and every later WR
 * of that QP completes with WR_FLUSH_ERR, in order. Nothing hangs and nothing is silently dropped.
 */
class ErrorPathTest {
    private static final int LOCAL_ONLY = Access.mask(Access.LOCAL_WRITE);

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void badLkeyIsALocalProtectionError(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            // A wrong key, a span past the end of the MR, and the key of an MR in another PD.
            for (int variant = 0; variant < 3; variant++) {
                Peer a = h.peerA(PeerSpec.rc());
                Peer b = h.peerB(PeerSpec.rc());
                h.connect(a, b);
                SendWr wr = a.rdma(1, WrOpcode.RDMA_WRITE, 0, 64, b, 0);
                String what;
                if (variant == 0) {
                    wr.sge(0).set(a.mr().address(), 64, a.mr().lkey() ^ 0x5a5a00);
                    what = "an unknown lkey";
                } else if (variant == 1) {
                    wr.sge(0).set(a.mr(), a.mr().length() - 32, 64);
                    what = "an SGE running 32 bytes past its MR";
                } else {
                    MemoryRegion foreign = h.track(h.track(h.a().allocatePd()).register(h.allocate(4096), Access.LOCAL_WRITE));
                    wr.sge(0).set(foreign, 0, 64);
                    what = "the lkey of an MR in another PD";
                }
                a.post(wr);
                WorkCompletion wc = h.await(a.sendCq(), "WRITE with " + what);
                Wcs.assertStatus(wc, WcStatus.LOC_PROT_ERR, 1, a.qpn(), "WRITE with " + what);
                assertFlushesAfterError(h, a);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void remoteAccessErrors(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            WrOpcode[] ops = {WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_AND_ADD};
            for (WrOpcode op : ops) {
                int len = op.isAtomic() ? 8 : 256;
                // 1. a bad rkey
                remoteError(h, op, "a bad rkey", PeerSpec.rc(), (a, b) -> a.rdma(1, op, 0, len, b, 0).rdma(b.addr(0), b.mr().rkey() ^ 0x77_0000));
                // 2. an MR registered without the remote right the operation needs
                int missing = op == WrOpcode.RDMA_WRITE ? Access.mask(Access.LOCAL_WRITE, Access.REMOTE_READ, Access.REMOTE_ATOMIC)
                        : op == WrOpcode.RDMA_READ ? Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_ATOMIC)
                        : Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ);
                remoteError(h, op, "an MR without the remote right (" + Access.describe(missing) + ")", PeerSpec.rc().mrAccess(missing),
                        (a, b) -> target(a, b, op, len, 0));
                // 3. out of the MR's bounds: READ/WRITE start inside and end 8 bytes past it; the atomic word lies just past it
                remoteError(h, op, "a span past the end of the remote MR", PeerSpec.rc(),
                        (a, b) -> target(a, b, op, op.isAtomic() ? 8 : 256, b.mr().length() - (op.isAtomic() ? 0 : 248)));
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void receiveBufferTooSmall(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            b.postRecv(7, 0, 16);
            a.post(a.wr(8, WrOpcode.SEND, 0, 64));
            // Responder: LOC_LEN_ERR on the receive; requester: NAK Invalid Request -> REM_INV_REQ_ERR.
            Wcs.assertStatus(h.await(b.recvCq(), "receive too small"), WcStatus.LOC_LEN_ERR, 7, b.qpn(), "receive of 64 bytes into 16");
            Wcs.assertStatus(h.await(a.sendCq(), "SEND into a small receive"), WcStatus.REM_INV_REQ_ERR, 8, a.qpn(), "SEND of 64 bytes");
            assertFlushesAfterError(h, a);
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void rnrRetryExhausted(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            // B never posts a receive; its RNR NAKs ask for 0.01 ms (timer code 1); A retries twice.
            h.connect(a, b, RcParams.defaults().rnrRetry(2).minRnrTimer(1));
            a.post(a.wr(3, WrOpcode.SEND, 0, 100));
            Wcs.assertStatus(h.await(a.sendCq(), "SEND to a QP without receives"), WcStatus.RNR_RETRY_EXC_ERR, 3, a.qpn(),
                    "SEND after rnr_retry 2 RNR NAKs");
            assertFlushesAfterError(h, a);
            h.assertNoCompletion(b.recvCq(), Duration.ofMillis(20), "B had no receive to complete");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void vanishedPeerExhaustsRetries(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            // timeout 10 = 4.096 us * 2^10 = 4.2 ms; retry_cnt 3: the error comes after ~4 timeouts, well under 2 s.
            h.connect(a, b, RcParams.defaults().timeout(10).retryCnt(3));
            b.qp().close();
            a.post(a.rdma(4, WrOpcode.RDMA_WRITE, 0, 5000, b, 0));
            Wcs.assertStatus(h.await(a.sendCq(), "WRITE to a destroyed QP"), WcStatus.RETRY_EXC_ERR, 4, a.qpn(),
                    "WRITE to a vanished peer");
            assertFlushesAfterError(h, a);
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void postingBeforeRtsIsRefused(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            RcParams p = RcParams.defaults();
            VerbsException recvInReset = assertThrows(VerbsException.class, () -> a.postRecv(1, 0, 64));
            assertTrue(recvInReset.getMessage().contains("RESET"), recvInReset.getMessage());
            refusedSend(a, "RESET");
            a.toInit(p.qpAccess());
            refusedSend(a, "INIT");
            a.postRecv(1, 0, 64); // receives may be posted from INIT on
            a.toRtr(b, h.activeMtu(), p);
            refusedSend(a, "RTR");
            h.assertNoCompletion(a.sendCq(), Duration.ofMillis(20), "refused WRs leave nothing behind");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void cqOverrunIsReported(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            Peer a = h.peerA(PeerSpec.rc().cqDepth(2).maxSendWr(64));
            Peer b = h.peerB(PeerSpec.rc().cqDepth(256).maxRecvWr(64));
            h.connect(a, b);
            int cap = a.sendCq().capacity();
            int n = cap + 2;
            if (n > a.qp().capabilities().maxSendWr() || n > 64) {
                throw new AssertionError("CQ of 2 entries was given " + cap + " slots; too many for this test's queues");
            }
            for (int i = 0; i < n; i++) {
                b.postRecv(i, i * 64L, 64);
            }
            for (int i = 0; i < n; i++) {
                a.post(a.wr(i, WrOpcode.SEND, 0, 8));
            }
            h.await(b.recvCq(), n, "all SENDs arrived");
            // The n send completions are produced once the ACKs arrive; A's CQ holds only cap of them.
            // Verbs posts CQ_ERR when the overrun happens, whether or not anyone polls: wait for it without polling.
            List<AsyncEvent> seen = new ArrayList<>();
            boolean beforePoll = waitForCqErr(h, a, seen, Duration.ofSeconds(3));
            VerbsException e = assertThrows(VerbsException.class, () -> a.sendCq().poll(new WorkCompletion()),
                    "polling a CQ that received " + n + " completions into " + cap + " slots");
            assertEquals(VerbsException.EOVERFLOW, e.errno(), e.getMessage());
            assertThrows(VerbsException.class, () -> a.sendCq().poll(new WorkCompletion()), "every later poll throws too");
            boolean afterPoll = beforePoll || waitForCqErr(h, a, seen, Duration.ofSeconds(1));
            assertTrue(afterPoll, "no CQ_ERR async event at all for the overrun " + a.sendCq().describe() + " (events: " + seen + ")");
            assertTrue(beforePoll, "CQ_ERR was posted only once the overrun CQ was polled; verbs posts it when the overrun"
                    + " happens (an application waiting for events before polling would never learn of it)");
            AsyncEvent cqErr = seen.stream().filter(ev -> ev.type() == AsyncEvent.Type.CQ_ERR).findFirst().orElseThrow();
            assertEquals(a.sendCq().describe(), cqErr.resource(), "the event names the CQ: " + cqErr);
        }
    }

    /** Drains A's async events into {@code seen} until a CQ_ERR arrives or {@code limit} passes. */
    private static boolean waitForCqErr(Harness h, Peer a, List<AsyncEvent> seen, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        while (System.nanoTime() - deadline < 0) {
            AsyncEvent ev;
            while ((ev = a.ctx().pollAsyncEvent()) != null) {
                seen.add(ev);
                if (ev.type() == AsyncEvent.Type.CQ_ERR) {
                    return true;
                }
            }
            h.run(Duration.ofMillis(1));
        }
        return false;
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void errorThenTheRestFlushesInOrder(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            for (int i = 0; i < 3; i++) {
                a.postRecv(300 + i, i * 64L, 64);
                b.postRecv(400 + i, i * 64L, 64);
            }
            Payloads.fill(a.buf(), 0, 4096, 1);
            SendWr chain = a.rdma(1, WrOpcode.RDMA_WRITE, 0, 4096, b, 0);
            SendWr bad = a.rdma(2, WrOpcode.RDMA_WRITE, 0, 64, b, 0).rdma(b.addr(0), b.mr().rkey() + 0x100);
            chain.next(bad);
            SendWr tail = bad;
            WrOpcode[] rest = {WrOpcode.SEND, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_READ, WrOpcode.SEND_WITH_IMM};
            for (int i = 0; i < rest.length; i++) {
                SendWr w = a.rdma(3 + i, rest[i], 8192, 64, b, 8192);
                tail.next(w);
                tail = w;
            }
            a.post(chain);
            WorkCompletion[] wcs = h.await(a.sendCq(), 2 + rest.length, "the chain's completions");
            Wcs.assertSuccess(wcs[0], WcOpcode.RDMA_WRITE, 1, a.qpn(), "the WRITE before the error");
            Payloads.assertPayload(b.buf(), 0, 4096, 1, "the WRITE before the error");
            Wcs.assertStatus(wcs[1], WcStatus.REM_ACCESS_ERR, 2, a.qpn(), "the WRITE with a bad rkey");
            for (int i = 0; i < rest.length; i++) {
                Wcs.assertStatus(wcs[2 + i], WcStatus.WR_FLUSH_ERR, 3 + i, a.qpn(), rest[i] + " after the error");
            }
            WorkCompletion[] recvs = h.await(a.recvCq(), 3, "A's receives flushed");
            for (int i = 0; i < 3; i++) {
                Wcs.assertStatus(recvs[i], WcStatus.WR_FLUSH_ERR, 300 + i, a.qpn(), "receive " + i + " of the failed QP");
            }
            assertEquals(QpState.ERR, a.qp().state());
        }
    }

    /** Connects a fresh pair, posts the WR {@code make} builds, expects REM_ACCESS_ERR and the flushes after it. */
    private static void remoteError(Harness h, WrOpcode op, String why, PeerSpec bSpec, WrMaker make) {
        Peer a = h.peerA(PeerSpec.rc());
        Peer b = h.peerB(bSpec);
        h.connect(a, b);
        String what = op + " with " + why;
        a.post(make.make(a, b));
        Wcs.assertStatus(h.await(a.sendCq(), what), WcStatus.REM_ACCESS_ERR, 1, a.qpn(), what);
        assertFlushesAfterError(h, a);
    }

    private static SendWr target(Peer a, Peer b, WrOpcode op, int len, long remoteOff) {
        SendWr wr = a.wr(1, op, 0, len);
        return op.isAtomic() ? wr.atomic(b.addr(remoteOff), b.mr().rkey(), 1, 0) : wr.rdma(b.addr(remoteOff), b.mr().rkey());
    }

    /** After an error completion: the QP is in ERR and later WRs, sends and receives, flush in order. */
    static void assertFlushesAfterError(Harness h, Peer a) {
        h.awaitCondition(() -> a.qp().state() == QpState.ERR, a + " in ERR after an error completion", Duration.ofSeconds(5));
        SendWr chain = a.wr(900, WrOpcode.SEND, 0, 8).next(a.wr(901, WrOpcode.RDMA_WRITE, 0, 8).rdma(0, 0)
                .next(a.wr(902, WrOpcode.SEND, 0, 8)));
        a.post(chain);
        WorkCompletion[] wcs = h.await(a.sendCq(), 3, "WRs posted after the error");
        for (int i = 0; i < 3; i++) {
            Wcs.assertStatus(wcs[i], WcStatus.WR_FLUSH_ERR, 900 + i, a.qpn(), "WR " + i + " posted to a QP in ERR");
        }
        a.postRecv(910, 0, 8);
        Wcs.assertStatus(h.await(a.recvCq(), "receive posted after the error"), WcStatus.WR_FLUSH_ERR, 910, a.qpn(),
                "receive posted to a QP in ERR");
        h.assertNoCompletion(a.sendCq(), Duration.ofMillis(10), "nothing more completes on the failed QP");
    }

    private static void refusedSend(Peer a, String state) {
        VerbsException e = assertThrows(VerbsException.class, () -> a.qp().postSend(a.wr(1, WrOpcode.SEND, 0, 8)),
                "postSend in " + state);
        assertEquals(VerbsException.EINVAL, e.errno());
        assertTrue(e.getMessage().contains(state), "the refusal names the state: " + e.getMessage());
        VerbsException b = assertThrows(VerbsException.class, () -> a.qp().sendQueue().start(), "builder start() in " + state);
        assertTrue(b.getMessage().contains(state), "the refusal names the state: " + b.getMessage());
        SendWr unsignaled = new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.INLINE).sge(a.mr(), 0, 0);
        assertThrows(VerbsException.class, () -> a.qp().postSend(unsignaled), "any postSend in " + state);
    }

    @FunctionalInterface
    private interface WrMaker {
        SendWr make(Peer a, Peer b);
    }
}
