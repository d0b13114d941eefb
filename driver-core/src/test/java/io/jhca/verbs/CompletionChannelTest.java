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
 * The provider-independent rules of completion channels: events in order, a selectable level that follows the
 * pending events exactly, acknowledgement before a CQ closes, a channel that outlives its CQs. The fake provider
 * cannot arm, so events are raised directly through the provider-side hook.
 */
class CompletionChannelTest extends VerbsTestSupport {

    @Test
    void eventsComeInOrderAndTheSelectableLevelFollowsThem() throws Exception {
        CompletionChannel ch = ctx.createCompletionChannel();
        CompletionQueue a = ctx.createCq(8, ch);
        CompletionQueue b = ctx.createCq(8, ch, CqFlags.SINGLE_THREADED);
        try (Selector sel = Selector.open()) {
            ch.selectableChannel().register(sel, SelectionKey.OP_READ);
            assertNull(ch.getEvent(0));
            assertNull(ch.getEvent(20), "nothing raised: the wait times out");
            assertEquals(0, sel.selectNow());
            a.raiseCompletionEvent();
            b.raiseCompletionEvent();
            assertEquals(2, ch.pendingEvents());
            assertEquals(1, sel.selectNow());
            sel.selectedKeys().clear();
            assertSame(a, ch.getEvent(0));
            assertEquals(1, sel.selectNow(), "still readable: one event left");
            sel.selectedKeys().clear();
            assertSame(b, ch.getEvent(0));
            assertEquals(0, sel.selectNow(), "no event left: not readable");
            assertNull(ch.getEvent(0));
        }
        assertEquals(1, a.unackedEvents());
        refused(VerbsException.EINVAL, "1 taken and unacknowledged", () -> a.ackEvents(2));
        refused(VerbsException.EINVAL, "cannot acknowledge -1", () -> a.ackEvents(-1));
        refused(VerbsException.EBUSY, "1 completion events not acknowledged", a::close);
        refused(VerbsException.EBUSY, "2 CQs", ch::close);
        refused(VerbsException.EBUSY, "completion channel", ctx::close);
        a.ackEvents(1);
        b.ackEvents(1);
        a.close();
        b.close();
        ch.close();
        assertTrue(ch.isClosed());
    }

    @Test
    void aBlockedWaiterWakesOnTheEvent() throws Exception {
        CompletionChannel ch = ctx.createCompletionChannel();
        CompletionQueue cq = ctx.createCq(8, ch);
        CompletableFuture<CompletionQueue> got = new CompletableFuture<>();
        Thread waiter = new Thread(() -> {
            try {
                got.complete(ch.getEvent(30_000));
            } catch (Throwable t) {
                got.completeExceptionally(t);
            }
        }, "cq-event-waiter");
        waiter.start();
        while (waiter.getState() != Thread.State.TIMED_WAITING && !got.isDone()) {
            Thread.onSpinWait(); // blocked in getEvent before the event is raised
        }
        cq.raiseCompletionEvent();
        assertSame(cq, got.get(30, TimeUnit.SECONDS));
        waiter.join();
        cq.ackEvents(1);
        cq.close();
        ch.close();
    }

    @Test
    void aClosingCqTakesItsUntakenEventsAlong() throws Exception {
        CompletionChannel ch = ctx.createCompletionChannel();
        CompletionQueue cq = ctx.createCq(8, ch);
        cq.raiseCompletionEvent();
        assertEquals(1, ch.pendingEvents());
        cq.close(); // nothing taken, nothing to acknowledge
        assertEquals(0, ch.pendingEvents());
        try (Selector sel = Selector.open()) {
            ch.selectableChannel().register(sel, SelectionKey.OP_READ);
            assertEquals(0, sel.selectNow(), "the dropped event no longer makes the channel readable");
        }
        ch.close();
    }

    @Test
    void armingNeedsAChannelAndAProviderThatCanArm() throws Exception {
        CompletionQueue plain = ctx.createCq(8);
        refused(VerbsException.EINVAL, "has no completion channel", () -> plain.requestNotify(false));
        CompletionChannel ch = ctx.createCompletionChannel();
        CompletionQueue cq = ctx.createCq(8, ch);
        refused(VerbsException.EOPNOTSUPP, "completion events not supported", () -> cq.requestNotify(true));
        refused(VerbsException.EINVAL, "negative timeout", () -> {
            try {
                ch.getEvent(-1);
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        });
        cq.close();
        ch.close();
        refused(VerbsException.EINVAL, "is closed", () -> ctx.createCq(8, ch));
        plain.close();
    }
}
