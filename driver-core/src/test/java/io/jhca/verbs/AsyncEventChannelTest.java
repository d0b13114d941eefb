package io.jhca.verbs;

import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The provider-independent rules of the async event channel: events in order, a selectable level that follows
 * the pending events, acknowledgement before a QP or CQ closes (each event once), events of a closed element
 * dropped, pollAsyncEvent taking from the same queue without holding anything. Events are posted directly through
 * the provider-side hook.
 */
class AsyncEventChannelTest extends VerbsTestSupport {

    @Test
    void eventsComeInOrderAndTheSelectableLevelFollowsThem() throws Exception {
        AsyncEventChannel ch = ctx.asyncEventChannel();
        assertSame(ch, ctx.asyncEventChannel(), "one channel per context");
        CompletionQueue cq = track(ctx.createCq(8));
        ProtectionDomain pd = track(ctx.allocatePd());
        QueuePair qp = track(pd.createQp(QpInitAttributes.rc(cq, cq)));
        try (Selector sel = Selector.open()) {
            ch.selectableChannel().register(sel, SelectionKey.OP_READ);
            assertNull(ch.getEvent(0));
            assertNull(ch.getEvent(20), "nothing posted: the wait times out");
            assertEquals(0, sel.selectNow());
            ctx.postAsyncEvent(AsyncEvent.of(AsyncEvent.Type.QP_ACCESS_ERR, qp, "test"));
            ctx.postAsyncEvent(AsyncEvent.of(AsyncEvent.Type.CQ_ERR, cq, "test"));
            ctx.postAsyncEvent(AsyncEvent.ofPort(AsyncEvent.Type.PORT_ERR, 1, "test"));
            assertEquals(3, ch.pendingEvents());
            assertEquals(1, sel.selectNow());
            sel.selectedKeys().clear();
            AsyncEvent e1 = ch.getEvent(0);
            assertEquals(AsyncEvent.Type.QP_ACCESS_ERR, e1.type());
            assertSame(qp, e1.qp());
            assertNull(e1.cq());
            assertEquals(qp.describe(), e1.resource());
            assertEquals(1, sel.selectNow(), "still readable: two events left");
            sel.selectedKeys().clear();
            AsyncEvent e2 = ch.getEvent(0);
            assertSame(cq, e2.cq());
            AsyncEvent e3 = ch.getEvent(0);
            assertEquals(1, e3.port());
            assertNull(e3.element());
            assertEquals(0, sel.selectNow(), "no event left: not readable");
            assertNull(ch.getEvent(0));
            assertEquals(3, ch.unackedEvents());
            assertEquals(1, qp.unackedAsyncEvents());
            assertEquals(1, cq.unackedAsyncEvents());

            refused(VerbsException.EBUSY, "1 async events not acknowledged", qp::close);
            ch.ackEvent(e1);
            refused(VerbsException.EINVAL, "acknowledged already", () -> ch.ackEvent(e1));
            refused(VerbsException.EINVAL, "null", () -> ch.ackEvent(null));
            refused(VerbsException.EINVAL, "was not taken",
                    () -> ch.ackEvent(AsyncEvent.of(AsyncEvent.Type.QP_ACCESS_ERR, qp, "test")));
            assertEquals(0, qp.unackedAsyncEvents());
            qp.close();
            refused(VerbsException.EBUSY, "1 async events not acknowledged", cq::close);
            ch.ackEvent(e2);
            ch.ackEvent(e3);
            assertEquals(0, ch.unackedEvents());
        }
    }

    @Test
    void anEqualEventIsStillASeparateEvent() throws Exception {
        AsyncEventChannel ch = ctx.asyncEventChannel();
        CompletionQueue cq = track(ctx.createCq(8));
        AsyncEvent e = AsyncEvent.of(AsyncEvent.Type.CQ_ERR, cq, "same");
        ctx.postAsyncEvent(e);
        ctx.postAsyncEvent(AsyncEvent.of(AsyncEvent.Type.CQ_ERR, cq, "same"));
        AsyncEvent a = ch.getEvent(0);
        AsyncEvent b = ch.getEvent(0);
        assertEquals(a, b, "records with the same content");
        assertEquals(2, cq.unackedAsyncEvents());
        ch.ackEvent(a);
        refused(VerbsException.EBUSY, "1 async events", cq::close);
        ch.ackEvent(b);
        refused(VerbsException.EINVAL, "acknowledged already", () -> ch.ackEvent(b));
    }

    @Test
    void eventsOfAClosedElementGoWithIt() throws Exception {
        AsyncEventChannel ch = ctx.asyncEventChannel();
        CompletionQueue cq = ctx.createCq(8);
        CompletionQueue other = track(ctx.createCq(8));
        try (Selector sel = Selector.open()) {
            ch.selectableChannel().register(sel, SelectionKey.OP_READ);
            ctx.postAsyncEvent(AsyncEvent.of(AsyncEvent.Type.CQ_ERR, cq, "test"));
            assertEquals(1, sel.selectNow());
            sel.selectedKeys().clear();
            cq.close(); // not taken: nothing to acknowledge, the event leaves with the CQ
            assertEquals(0, ch.pendingEvents());
            assertEquals(0, sel.selectNow(), "the dropped event leaves the channel unreadable");
            assertNull(ch.getEvent(0));
            ctx.postAsyncEvent(AsyncEvent.of(AsyncEvent.Type.CQ_ERR, other, "test"));
            AsyncEvent e = ch.getEvent(0);
            assertSame(other, e.cq(), "the channel goes on");
            refused(VerbsException.EBUSY, "not acknowledged", other::close);
            ch.ackEvent(e);
        }
    }

    @Test
    void pollAsyncEventTakesFromTheSameQueueAndHoldsNothing() throws Exception {
        AsyncEventChannel ch = ctx.asyncEventChannel();
        CompletionQueue cq = ctx.createCq(8);
        ctx.postAsyncEvent(AsyncEvent.of(AsyncEvent.Type.CQ_ERR, cq, "first"));
        ctx.postAsyncEvent(AsyncEvent.of(AsyncEvent.Type.CQ_ERR, cq, "second"));
        assertEquals("first", ctx.pollAsyncEvent().detail());
        assertEquals(1, ch.pendingEvents());
        AsyncEvent second = ch.getEvent(0);
        assertEquals("second", second.detail());
        assertNull(ctx.pollAsyncEvent());
        assertEquals(1, cq.unackedAsyncEvents(), "only the event taken from the channel counts");
        ctx.postAsyncEvent(AsyncEvent.of(AsyncEvent.Type.CQ_ERR, cq, "third"));
        assertEquals("third", ctx.pollAsyncEvent().detail());
        assertEquals(1, cq.unackedAsyncEvents());
        ch.ackEvent(second);
        cq.close();
    }

    @Test
    void aBlockedWaiterWakesOnTheEventAndOnClose() throws Exception {
        AsyncEventChannel ch = ctx.asyncEventChannel();
        CompletableFuture<AsyncEvent> got = waiter(ch);
        ctx.postAsyncEvent(new AsyncEvent(AsyncEvent.Type.DEVICE_FATAL, ctx.describe(), "test"));
        AsyncEvent e = got.get(30, TimeUnit.SECONDS);
        assertEquals(AsyncEvent.Type.DEVICE_FATAL, e.type());
        ch.ackEvent(e);

        CompletableFuture<AsyncEvent> late = waiter(ch);
        ctx.close();
        assertNull(late.get(30, TimeUnit.SECONDS), "closing the context wakes the waiter empty-handed");
        refused(VerbsException.EINVAL, "closed", () -> {
            try {
                ch.getEvent(0);
            } catch (InterruptedException x) {
                throw new AssertionError(x);
            }
        });
        ctx = Verbs.open("fake0"); // for closeAll
    }

    @Test
    void aNegativeTimeoutIsRefused() {
        refused(VerbsException.EINVAL, "negative timeout -1", () -> {
            try {
                ctx.asyncEventChannel().getEvent(-1);
            } catch (InterruptedException x) {
                throw new AssertionError(x);
            }
        });
    }

    private static CompletableFuture<AsyncEvent> waiter(AsyncEventChannel ch) {
        CompletableFuture<AsyncEvent> got = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                got.complete(ch.getEvent(30_000));
            } catch (Throwable x) {
                got.completeExceptionally(x);
            }
        }, "async-event-waiter");
        t.start();
        while (t.getState() != Thread.State.TIMED_WAITING && !got.isDone()) {
            Thread.onSpinWait(); // blocked in getEvent before the event comes
        }
        return got;
    }
}
