package io.jhca.tests.events;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.AsyncEventChannel;
import io.jhca.verbs.Context;
import io.jhca.verbs.QpState;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Async events ({@code ibv_get_async_event} / {@code ibv_ack_async_event}) on every pair: a remote access error
 * raises QP_ACCESS_ERR on the responder's QP and nothing on the requester's device, a CQ overrun raises CQ_ERR on
 * that CQ, a thread blocked in getEvent wakes, a selector sees the channel readable, and a QP or CQ with an event
 * taken and not acknowledged refuses to close.
 */
class AsyncEventTest {

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void remoteAccessErrorRaisesQpAccessErrOnTheResponderQp(DevicePair pair) throws InterruptedException {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            a.post(a.rdma(1, WrOpcode.RDMA_WRITE, 0, 64, b, 0).rdma(b.addr(0), b.mr().rkey() ^ 0x77_0000));
            Wcs.assertStatus(h.await(a.sendCq(), "WRITE with a bad rkey"), WcStatus.REM_ACCESS_ERR, 1, a.qpn(),
                    "WRITE with a bad rkey");
            AsyncEventChannel ch = b.ctx().asyncEventChannel();
            AsyncEvent ev = awaitAsync(h, b.ctx(), "QP_ACCESS_ERR on the responder");
            assertEquals(AsyncEvent.Type.QP_ACCESS_ERR, ev.type(), ev.toString());
            assertSame(b.qp(), ev.qp(), "the event names the responder's QP: " + ev);
            assertEquals(b.qp().describe(), ev.resource());
            h.awaitCondition(() -> b.qp().state() == QpState.ERR, "responder QP in ERR", Harness.DEFAULT_WAIT);

            // an event taken and not acknowledged holds the QP open
            VerbsException busy = assertThrows(VerbsException.class, () -> b.qp().close());
            assertEquals(VerbsException.EBUSY, busy.errno(), busy.getMessage());
            assertEquals(1, b.qp().unackedAsyncEvents());
            ch.ackEvent(ev);
            assertThrows(VerbsException.class, () -> ch.ackEvent(ev), "a second acknowledgement");
            assertEquals(0, b.qp().unackedAsyncEvents());

            // the requester learns of its error from its completion only (IBTA: no affiliated event for it)
            h.run(Duration.ofMillis(100));
            AsyncEvent other;
            while ((other = a.ctx().pollAsyncEvent()) != null) {
                assertTrue(other.qp() != a.qp(), "no async event on the requester's QP: " + other);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void cqOverrunRaisesCqErrOnThatCq(DevicePair pair) throws InterruptedException {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            Peer a = h.peerA(PeerSpec.rc().cqDepth(2).maxSendWr(64));
            Peer b = h.peerB(PeerSpec.rc().cqDepth(256).maxRecvWr(64));
            h.connect(a, b);
            int n = a.sendCq().capacity() + 2;
            if (n > a.qp().capabilities().maxSendWr() || n > 64) {
                fail("CQ of 2 entries was given " + a.sendCq().capacity() + " slots; too many for this test's queues");
            }
            for (int i = 0; i < n; i++) {
                b.postRecv(i, i * 64L, 64);
            }
            for (int i = 0; i < n; i++) {
                a.post(a.wr(i, WrOpcode.SEND, 0, 8));
            }
            h.await(b.recvCq(), n, "all SENDs arrived");
            // nobody polls A's send CQ: the event comes when the overrun happens
            AsyncEvent ev = awaitAsync(h, a.ctx(), "CQ_ERR for the overrun " + a.sendCq().describe());
            assertEquals(AsyncEvent.Type.CQ_ERR, ev.type(), ev.toString());
            assertSame(a.sendCq(), ev.cq(), "the event names the CQ: " + ev);
            assertNull(ev.qp());
            VerbsException busy = assertThrows(VerbsException.class, () -> a.sendCq().close());
            assertEquals(VerbsException.EBUSY, busy.errno(), busy.getMessage());
            a.ctx().asyncEventChannel().ackEvent(ev);
            h.run(Duration.ofMillis(50));
            AsyncEvent more;
            while ((more = a.ctx().pollAsyncEvent()) != null) {
                assertTrue(more.type() != AsyncEvent.Type.CQ_ERR || more.cq() != a.sendCq(), "one CQ_ERR per overrun: " + more);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void aBlockedGetEventWakesOnTheEvent(DevicePair pair) throws Exception {
        try (Harness h = Harness.open(pair)) {
            h.expectErrors();
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            AsyncEventChannel ch = b.ctx().asyncEventChannel();
            CompletableFuture<AsyncEvent> got = new CompletableFuture<>();
            Thread waiter = new Thread(() -> {
                try {
                    got.complete(ch.getEvent(Harness.DEFAULT_WAIT.toMillis()));
                } catch (Throwable t) {
                    got.completeExceptionally(t);
                }
            }, "async-event-waiter");
            waiter.start();
            while (waiter.getState() != Thread.State.TIMED_WAITING && !got.isDone()) {
                Thread.onSpinWait(); // blocked in getEvent before the error is made
            }
            a.post(a.rdma(1, WrOpcode.RDMA_READ, 0, 64, b, 0).rdma(b.addr(0), b.mr().rkey() ^ 0x77_0000));
            Wcs.assertStatus(h.await(a.sendCq(), "READ with a bad rkey"), WcStatus.REM_ACCESS_ERR, 1, a.qpn(),
                    "READ with a bad rkey");
            h.awaitCondition(got::isDone, "the blocked getEvent to return", Harness.DEFAULT_WAIT);
            AsyncEvent ev = got.get(1, TimeUnit.SECONDS);
            waiter.join();
            assertEquals(AsyncEvent.Type.QP_ACCESS_ERR, ev.type(), "" + ev);
            assertSame(b.qp(), ev.qp());
            ch.ackEvent(ev);
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void selectorSeesTheChannelReadable(DevicePair pair) throws Exception {
        try (Harness h = Harness.open(pair); Selector sel = Selector.open()) {
            h.expectErrors();
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            AsyncEventChannel ch = b.ctx().asyncEventChannel();
            SelectionKey key = ch.selectableChannel().register(sel, SelectionKey.OP_READ);
            assertEquals(0, sel.selectNow(), "nothing pending yet");
            a.post(a.rdma(1, WrOpcode.RDMA_WRITE, 0, 64, b, 0).rdma(b.addr(0), b.mr().rkey() ^ 0x77_0000));
            long deadline = System.nanoTime() + Harness.DEFAULT_WAIT.toNanos();
            while (sel.select(1) == 0) {
                h.progress();
                assertTrue(System.nanoTime() - deadline < 0, "selector never saw the async channel readable");
            }
            assertTrue(sel.selectedKeys().contains(key));
            sel.selectedKeys().clear();
            AsyncEvent ev = ch.getEvent(0);
            assertEquals(AsyncEvent.Type.QP_ACCESS_ERR, ev.type(), "readable means an event is there: " + ev);
            assertEquals(0, sel.selectNow(), "taking the only event leaves the channel unreadable");
            ch.ackEvent(ev);
            h.await(a.sendCq(), "the WRITE's error completion");
            key.cancel();
        }
    }

    /**
     * Takes async events of {@code ctx} until one that is not a port event comes (driving the engines of a
     * CALLER pair between short waits); fails naming {@code what} after {@link Harness#DEFAULT_WAIT}.
     */
    static AsyncEvent awaitAsync(Harness h, Context ctx, String what) throws InterruptedException {
        AsyncEventChannel ch = ctx.asyncEventChannel();
        long deadline = System.nanoTime() + Harness.DEFAULT_WAIT.toNanos();
        List<AsyncEvent> skipped = new ArrayList<>();
        while (true) {
            AsyncEvent ev = ch.getEvent(1);
            if (ev != null && ev.port() == 0) {
                return ev;
            }
            if (ev != null) {
                skipped.add(ev);
                ch.ackEvent(ev);
            }
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + Harness.DEFAULT_WAIT.toMillis() + " ms waiting for " + what + " on "
                        + ctx.name() + " (port events seen: " + skipped + ")");
            }
            h.progress();
        }
    }
}
