package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;

import org.junit.jupiter.api.Test;

import io.jhca.rxe.transport.CqRing;
import io.jhca.rxe.transport.Peer;
import io.jhca.rxe.transport.RecvRing;
import io.jhca.rxe.transport.RecvWqe;
import io.jhca.rxe.transport.SendRing;
import io.jhca.rxe.transport.SendWqe;
import io.jhca.rxe.transport.TransportQp;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * A QP is in ERR before its error completion can be polled (verbs: the completion reports the state change).
 * The transport QPs here tell, at the moment they report ERR, how many completions their CQ already shows: it
 * must be none, or a thread polling the CQ could see the error completion while the QP still says RTS.
 */
class ErrorOrderTest {

    private static final int QPN = 0xABC00;

    /** A transport QP on {@code ctx} with its own CQ; {@code atError[0]} records the CQ's size at ERR. */
    private static TransportQp transport(final RxeContext ctx, final Rig r, final CqRing cq, final int[] atError) {
        final TransportQp t = new TransportQp(ctx.engine(), QPN, QpType.RC, ctx == r.a ? r.pdA : r.pdB, cq, cq,
                false, new SendRing(16, 1, 0), new RecvRing(16, 1), (event, detail) -> atError[0] = cq.size());
        ctx.engine().addQp(t);
        return t;
    }

    private static void bringUp(final TransportQp t, final int destQpn, final Peer peer, final int retryCnt) {
        t.applyModify(QpAttributes.toInit(1, Access.REMOTE_WRITE), QpState.INIT, null);
        final AhAttributes ah = AhAttributes.to(Gid.ZERO).sgidIndex(1);
        t.applyModify(QpAttributes.toRtr(destQpn, 0, ah, Mtu.MTU_1024).minRnrTimer(1).maxDestRdAtomic(1),
                QpState.RTR, peer);
        t.applyModify(QpAttributes.toRts(0).timeout(4).retryCnt(retryCnt).maxRdAtomic(1), QpState.RTS, null);
    }

    private static WorkCompletion pollOne(final Rig r, final CqRing cq) {
        final WorkCompletion wc = new WorkCompletion();
        final long end = System.nanoTime() + 10_000_000_000L;
        while (cq.poll(wc) != 1) {
            assertTrue(System.nanoTime() < end, "no completion");
            r.progress();
        }
        return wc;
    }

    @Test
    void requesterIsInErrorBeforeItsRetryExceededCompletionIsVisible() throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024)) {
            final CqRing cq = new CqRing(16);
            final int[] atError = {-1};
            final TransportQp t = transport(r.a, r, cq, atError);
            // nobody listens at 127.11.255.254: timeout 4 (65 us), retry_cnt 0
            bringUp(t, 0x77, Peer.of(InetAddress.getByName("127.11.255.254"), 4791), 0);
            final SendRing sq = sendRingOf(t);
            final SendWqe w = sq.tailSlot();
            w.open(1, WrOpcode.SEND, SendFlags.SIGNALED, 0, 0, 0, 0, 0);
            w.addSge(r.mrA.address(), 64, r.mrA.lkey());
            sq.advanceTail();
            sq.publish();
            final WorkCompletion wc = pollOne(r, cq);
            assertEquals(WcStatus.RETRY_EXC_ERR, wc.status());
            assertEquals(0, atError[0], "completions visible when the QP reported ERR");
            r.a.engine().removeQp(t);
        }
    }

    @Test
    void responderIsInErrorBeforeItsReceiveErrorCompletionIsVisible() throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024);
             QueuePair a = r.pdA.createQp(QpInitAttributes.rc(r.cqA, r.cqA))) {
            final CqRing cq = new CqRing(16);
            final int[] atError = {-1};
            final TransportQp t = transport(r.b, r, cq, atError);
            bringUp(t, a.qpn(), Peer.of(r.a.config().address(), 4791), 7);
            a.modify(QpAttributes.toInit(1));
            a.modify(QpAttributes.toRtr(QPN, 0, AhAttributes.to(Rig.gid(r.b)).sgidIndex(1), Mtu.MTU_1024)
                    .maxDestRdAtomic(1).minRnrTimer(1));
            a.modify(QpAttributes.toRts(0).timeout(14).retryCnt(7).maxRdAtomic(1));
            final RecvRing rq = recvRingOf(t);
            final RecvWqe rw = rq.tailSlot();
            rw.open(50);
            rw.addSge(r.mrB.address(), 100, r.mrB.lkey()); // too small for what comes
            rq.advanceTail();
            rq.publish();
            a.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 3000));
            final WorkCompletion wc = pollOne(r, cq);
            assertEquals(WcStatus.LOC_LEN_ERR, wc.status());
            assertEquals(0, atError[0], "completions visible when the QP reported ERR");
            r.expect(r.cqA, 1, WcStatus.REM_INV_REQ_ERR);
            r.b.engine().removeQp(t);
        }
    }

    private static SendRing sendRingOf(final TransportQp t) throws Exception {
        final var f = TransportQp.class.getDeclaredField("sq");
        f.setAccessible(true);
        return (SendRing) f.get(t);
    }

    private static RecvRing recvRingOf(final TransportQp t) throws Exception {
        final var f = TransportQp.class.getDeclaredField("rq");
        f.setAccessible(true);
        return (RecvRing) f.get(t);
    }
}
