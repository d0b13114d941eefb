package io.jhca.tests.events;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.CompletionChannel;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Completion channels and CQ events ({@code ibv_req_notify_cq} / {@code ibv_get_cq_event} /
 * {@code ibv_ack_cq_events}): an armed CQ raises exactly one event for the right CQ, an unarmed one none;
 * solicited-only arming waits for a solicited completion; a selector sees the channel readable.
 */
class CompletionEventTest {
    private static final Duration QUIET = Duration.ofMillis(200);

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void armedCqRaisesOneEventPerArm(DevicePair pair) throws InterruptedException {
        try (Harness h = Harness.open(pair)) {
            CompletionChannel ch = h.track(h.a().createCompletionChannel());
            Peer a = h.peerA(PeerSpec.rc().channel(ch));
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            assertSame(ch, a.sendCq().channel());
            long wrId = 0;

            // armed for the next completion: one event, for the send CQ, then the completion polls out
            a.sendCq().requestNotify(false);
            send(h, a, b, ++wrId, SendFlags.SIGNALED);
            assertSame(a.sendCq(), h.awaitEvent(ch, "event after one signaled SEND"), "the event names the send CQ");
            Wcs.assertSuccess(h.await(a.sendCq(), "SEND completion"), WcOpcode.SEND, wrId, a.qpn(), "send");
            h.assertNoEvent(ch, QUIET, "one arm gives one event");
            assertEquals(1, a.sendCq().unackedEvents());
            a.sendCq().ackEvents(1);
            assertEquals(0, a.sendCq().unackedEvents());

            // not armed: the completion comes, no event
            send(h, a, b, ++wrId, SendFlags.SIGNALED);
            Wcs.assertSuccess(h.await(a.sendCq(), "SEND completion, unarmed"), WcOpcode.SEND, wrId, a.qpn(), "send");
            h.assertNoEvent(ch, QUIET, "an unarmed CQ raises no event");

            // re-armed: a second event
            a.sendCq().requestNotify(false);
            send(h, a, b, ++wrId, SendFlags.SIGNALED);
            assertSame(a.sendCq(), h.awaitEvent(ch, "event after re-arming"));
            Wcs.assertSuccess(h.await(a.sendCq(), "SEND completion, re-armed"), WcOpcode.SEND, wrId, a.qpn(), "send");

            // a burst after one arm: exactly one event
            a.sendCq().requestNotify(false);
            int n = 16;
            for (int i = 0; i < n; i++) {
                b.postRecv(wrId + 1 + i, 0, 64);
            }
            for (int i = 0; i < n; i++) {
                a.post(a.wr(++wrId, WrOpcode.SEND, 0, 32).sendFlags(SendFlags.SIGNALED));
            }
            h.await(a.sendCq(), n, "burst of " + n + " SEND completions");
            h.await(b.recvCq(), n + 3, "receives");
            assertSame(a.sendCq(), h.awaitEvent(ch, "event after a burst"));
            h.assertNoEvent(ch, QUIET, "a burst after one arm gives one event");

            // an unacknowledged event keeps the CQ open; a channel with CQs on it refuses to close
            VerbsException busy = assertThrows(VerbsException.class, () -> a.sendCq().close());
            assertEquals(VerbsException.EBUSY, busy.errno(), busy.getMessage());
            VerbsException chBusy = assertThrows(VerbsException.class, ch::close);
            assertEquals(VerbsException.EBUSY, chBusy.errno(), chBusy.getMessage());
            assertThrows(VerbsException.class, () -> a.sendCq().ackEvents(3), "more acks than events taken");
            a.sendCq().ackEvents(2);
            VerbsException noChannel = assertThrows(VerbsException.class, () -> b.sendCq().requestNotify(false));
            assertEquals(VerbsException.EINVAL, noChannel.errno(), noChannel.getMessage());
            assertNull(ch.getEvent(0));
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void solicitedOnlyWaitsForASolicitedReceive(DevicePair pair) throws InterruptedException {
        try (Harness h = Harness.open(pair)) {
            CompletionChannel ch = h.track(h.b().createCompletionChannel());
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc().channel(ch));
            h.connect(a, b);
            b.recvCq().requestNotify(true);
            send(h, a, b, 1, SendFlags.SIGNALED);
            WorkCompletion plain = h.await(b.recvCq(), "unsolicited receive");
            Wcs.assertRecv(plain, WcOpcode.RECV, 1, b.qpn(), 32, null, "recv");
            assertFalse(plain.solicited(), "a plain SEND's receive is not solicited");
            h.assertNoEvent(ch, QUIET, "solicited-only arming ignores an unsolicited receive");
            send(h, a, b, 2, SendFlags.SIGNALED | SendFlags.SOLICITED);
            assertSame(b.recvCq(), h.awaitEvent(ch, "event after a solicited SEND"));
            WorkCompletion sol = h.await(b.recvCq(), "solicited receive");
            Wcs.assertRecv(sol, WcOpcode.RECV, 2, b.qpn(), 32, null, "recv");
            assertTrue(sol.solicited(), "a solicited SEND's receive says so");
            h.await(a.sendCq(), 2, "send completions");
            b.recvCq().ackEvents(1);
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void selectorSeesTheChannelReadable(DevicePair pair) throws Exception {
        try (Harness h = Harness.open(pair); Selector sel = Selector.open()) {
            CompletionChannel ch = h.track(h.a().createCompletionChannel());
            Peer a = h.peerA(PeerSpec.rc().channel(ch));
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            SelectionKey key = ch.selectableChannel().register(sel, SelectionKey.OP_READ);
            assertEquals(0, sel.selectNow(), "nothing pending yet");
            a.sendCq().requestNotify(false);
            send(h, a, b, 1, SendFlags.SIGNALED);
            long deadline = System.nanoTime() + Harness.DEFAULT_WAIT.toNanos();
            while (sel.select(1) == 0) {
                h.progress();
                assertTrue(System.nanoTime() - deadline < 0, "selector never saw the channel readable");
            }
            assertTrue(sel.selectedKeys().contains(key));
            sel.selectedKeys().clear();
            assertSame(a.sendCq(), ch.getEvent(0), "readable means an event is there");
            assertEquals(0, sel.selectNow(), "taking the only event leaves the channel unreadable");
            h.await(a.sendCq(), "SEND completion");
            a.sendCq().ackEvents(1);
            key.cancel();
        }
    }

    private static void send(Harness h, Peer a, Peer b, long wrId, int flags) {
        b.postRecv(wrId, 0, 64);
        a.post(a.wr(wrId, WrOpcode.SEND, 0, 32).sendFlags(flags));
    }
}
