package io.jhca.rxe.transport;

import io.jhca.rxe.wire.Psn;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttrMask;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

/**
 * The transport side of one QP: its queues, the attributes the engine needs, its transport state and the three
 * roles of rxe (requester, completer, responder). Owned by the device's engine: every field below is read and
 * written on the engine thread only; the application reaches it through the rings and through
 * {@link Engine#runOnEngine} commands (create, modify, destroy).
 */
public final class TransportQp {

    /** How the transport tells the verbs object about errors it found on its own. */
    public interface Events {
        /** The QP moved to the error state; {@code event} (may be null) is the async event to report. */
        void enteredError(AsyncEvent.Type event, String detail);

        /** A QP of an SRQ in the error state will take no more WQEs from it (IBTA 11.6.3.2, rxe flush_recv_queue). */
        default void lastWqeReached() {
        }
    }

    /** rxe_param.h RXE_MAX_UNACKED_PSNS: the requester stops this far ahead of the oldest unacked PSN. */
    static final int MAX_UNACKED_PSNS = 128;
    /**
     * The PSNs a device's RC requesters together may have sent and not had acknowledged: two QPs' windows. A jhca
     * receiver holds one window and a burst (a 4 MiB socket buffer, a 256-frame packet ring); sixteen QPs' windows
     * (8 MiB of 4 KiB packets) overflowed it, and each packet lost was resent with everything after it.
     */
    static final int DEVICE_MAX_UNACKED_PSNS = 2 * MAX_UNACKED_PSNS;
    /** rxe_param.h RXE_MAX_PKT_PER_ACK: AckReq at least this often within a long message. */
    static final int MAX_PKT_PER_ACK = 64;

    final Engine engine;
    final int qpn;
    final QpType type;
    final ProtectionDomain pd;
    final CqRing sendCq;
    final CqRing recvCq;
    final boolean sqSigAll;
    final SendRing sq;
    final RecvSource rq;
    /** The QP takes its receives from an SRQ; its error reports the last WQE reached once. */
    private final boolean srq;
    private boolean lastWqeReported;
    private final Events events;

    QpState state = QpState.RESET;
    int accessFlags;
    int qkey;
    /** IBV_QP_CREATE_BLOCK_SELF_MCAST_LB: this QP's own multicast sends are not delivered back to it. */
    boolean blockSelfMcastLoopback;
    Peer peer;
    int destQpn;
    /** Path MTU in bytes; an rxe QP starts with 256 until RTR sets it (rocev2.md §3.2). */
    int mtu = 256;
    /** Local ACK timeout, 4.096 us * 2^timeout; 0 = none. */
    long timeoutNanos;
    int retryCnt;
    int rnrRetry;
    int minRnrTimer;
    int maxRdAtomic = 1;
    int maxDestRdAtomic;

    /** Retransmit timer deadline (System.nanoTime), 0 when not armed. */
    long retransDeadline;
    /** End of an RNR wait; 0 when not waiting. */
    long rnrDeadline;

    final Requester requester;
    final Completer completer;
    final Responder responder;
    /** This QP's share of the device counters (the per-QP ones). */
    final RxeCounters counters = new RxeCounters();

    public TransportQp(final Engine engine, final int qpn, final QpType type, final ProtectionDomain pd,
            final CqRing sendCq, final CqRing recvCq, final boolean sqSigAll, final SendRing sq, final RecvSource rq,
            final Events events) {
        this.engine = engine;
        this.qpn = qpn;
        this.type = type;
        this.pd = pd;
        this.sendCq = sendCq;
        this.recvCq = recvCq;
        this.sqSigAll = sqSigAll;
        this.sq = sq;
        this.rq = rq;
        this.srq = rq instanceof SrqReceiver;
        this.events = events;
        this.requester = new Requester(this);
        this.completer = new Completer(this);
        this.responder = new Responder(this);
    }

    public int qpn() {
        return qpn;
    }

    /** This QP's counters (readable from any thread). */
    public RxeCounters counters() {
        return counters;
    }

    /** Counts {@code c} for this QP and its device. */
    void count(final RxeCounters.Counter c) {
        counters.increment(c);
        engine.counters.increment(c);
    }

    /** Engine thread: carries out a modify already checked by driver-core. {@code newPeer} is set with AV. */
    public void applyModify(final QpAttributes a, final QpState next, final Peer newPeer) {
        if (state == QpState.ERR && next != QpState.ERR && next != QpState.RESET) {
            // the transport failed after driver-core checked the transition from the state it knew: refuse, as
            // the kernel does for a QP already in ERR, rather than overwrite ERR with the requested state
            throw new io.jhca.verbs.VerbsException(io.jhca.verbs.VerbsException.EINVAL, "modify QP 0x"
                    + Integer.toHexString(qpn) + " to " + next + ": the QP went to the error state");
        }
        // an ACK still held goes out first, to the peer it was for: the modify may end the QP's answers (ERR, RESET;
        // rdma_disconnect moves the QP to ERR before its DREQ) or change where they go
        releaseHeldAck();
        if (a.has(QpAttrMask.ACCESS_FLAGS)) {
            accessFlags = a.accessFlags();
        }
        if (a.has(QpAttrMask.QKEY)) {
            qkey = a.qkey();
        }
        if (a.has(QpAttrMask.AV)) {
            peer = newPeer;
        }
        if (a.has(QpAttrMask.PATH_MTU)) {
            mtu = a.pathMtu().bytes();
        }
        if (a.has(QpAttrMask.TIMEOUT)) {
            // rxe_qp.c: qp_timeout_jiffies = nsecs_to_jiffies(4096 << timeout); 0 = no retransmit timer
            timeoutNanos = a.timeout() == 0 ? 0 : 4096L << a.timeout();
        }
        if (a.has(QpAttrMask.RETRY_CNT)) {
            retryCnt = a.retryCnt();
            completer.retryLeft = retryCnt;
        }
        if (a.has(QpAttrMask.RNR_RETRY)) {
            rnrRetry = a.rnrRetry();
            completer.rnrLeft = rnrRetry;
        }
        if (a.has(QpAttrMask.MIN_RNR_TIMER)) {
            minRnrTimer = a.minRnrTimer();
        }
        if (a.has(QpAttrMask.MAX_QP_RD_ATOMIC)) {
            // rxe rounds up to a power of two; 0 would stall reads for ever, so at least 1
            maxRdAtomic = SendRing.powerOfTwo(Math.max(1, a.maxRdAtomic()));
        }
        if (a.has(QpAttrMask.MAX_DEST_RD_ATOMIC)) {
            maxDestRdAtomic = a.maxDestRdAtomic();
            responder.resources.resize(maxDestRdAtomic);
        }
        if (a.has(QpAttrMask.DEST_QPN)) {
            destQpn = a.destQpn();
        }
        if (a.has(QpAttrMask.RQ_PSN)) {
            responder.reset(a.rqPsn());
        }
        if (a.has(QpAttrMask.SQ_PSN)) {
            requester.reset(a.sqPsn());
            completer.reset(a.sqPsn());
        }
        switch (next) {
            case RESET:
                lastWqeReported = false;
                resetQueues();
                state = QpState.RESET;
                break;
            case ERR:
                state = QpState.ERR;
                stopTimers();
                flush();
                break;
            case SQE:
                state = QpState.SQE;
                stopTimers();
                flushSend();
                break;
            default:
                state = next;
        }
    }

    private void resetQueues() {
        sq.discardAll();
        rq.discardAll();
        requester.reset(0);
        completer.reset(0);
        responder.reset(0);
        stopTimers();
    }

    private void stopTimers() {
        retransDeadline = 0;
        rnrDeadline = 0;
    }

    /** The transport found a fatal error: the QP goes to ERR and everything queued is flushed. */
    void enterError(final AsyncEvent.Type event, final String detail) {
        if (state == QpState.ERR) {
            return;
        }
        markError(event, detail);
        flush();
    }

    /**
     * The QP goes to ERR and the verbs object learns it, nothing is flushed yet. Called before the error
     * completion that goes with it is committed: verbs promises that a QP is in ERR once its error completion
     * can be polled, and a thread polling the CQ must never see the completion while the QP still says RTS.
     * Follow with {@link #flush()} after that completion.
     */
    void markError(final AsyncEvent.Type event, final String detail) {
        if (state == QpState.ERR) {
            return;
        }
        state = QpState.ERR;
        stopTimers();
        events.enteredError(event, detail);
    }

    /** In ERR, everything posted completes with WR_FLUSH_ERR (also WRs posted later: called every cycle). */
    void flush() {
        flushSend();
        flushRecv();
    }

    private void flushSend() {
        final long pi = sq.published();
        while (sq.compIndex != pi) {
            final WorkCompletion wc = claimSend(sq.at(sq.compIndex), WcStatus.WR_FLUSH_ERR);
            sq.completeHead();
            commitSend(wc);
        }
        sq.reqIndex = sq.compIndex;
        requester.rdAtomicInFlight = 0;
    }

    private void flushRecv() {
        RecvWqe w;
        while ((w = rq.peekFlush()) != null) {
            final WorkCompletion wc = completeRecv(w, WcStatus.WR_FLUSH_ERR, WcOpcode.RECV, 0);
            rq.completeHead();
            commitRecv(wc, false, 0, -1, false, false);
        }
        responder.recvInProgress = false;
        if (srq && !lastWqeReported) {
            lastWqeReported = true;
            events.lastWqeReached();
        }
    }

    /** Engine cycle: queued WRs of a QP in ERR are flushed as soon as they are posted. */
    int flushIfError() {
        if (state != QpState.ERR) {
            return 0;
        }
        if (sq.compIndex == sq.published() && rq.peekFlush() == null) {
            return 0;
        }
        flush();
        return 1;
    }

    boolean signaled(final SendWqe w) {
        return sqSigAll || (w.flags & SendFlags.SIGNALED) != 0;
    }

    /**
     * A send WR is done: fills its completion (if it failed or was signaled; unsignaled successes complete
     * silently) and returns it, not yet visible. Free the WQE's slot, then {@link #commitSend}: an application
     * that polls the completion and posts again at once must find the slot free.
     */
    WorkCompletion claimSend(final SendWqe w, final WcStatus status) {
        if (status != WcStatus.WR_FLUSH_ERR && w.opcode.completionOpcode() == WcOpcode.SEND) {
            count(RxeCounters.Counter.RDMA_SENDS); // rxe_comp.c do_complete: every SEND retired, signaled or not
        }
        if (status == WcStatus.SUCCESS && !signaled(w)) {
            return null;
        }
        final WorkCompletion wc = sendCq.claim();
        if (wc != null) {
            wc.set(w.wrId, status, w.opcode.completionOpcode(), qpn,
                    status == WcStatus.SUCCESS ? (int) w.length : 0);
        }
        return wc;
    }

    /** Publishes a completion from {@link #claimSend} (null: nothing to publish). */
    void commitSend(final WorkCompletion wc) {
        if (wc != null) {
            sendCq.commit();
        }
    }

    /** A receive completion with the common fields; returns the slot to add more (null on overrun). */
    WorkCompletion completeRecv(final RecvWqe w, final WcStatus status, final WcOpcode opcode, final int byteLength) {
        if (status == WcStatus.SUCCESS) {
            count(RxeCounters.Counter.RDMA_RECVS); // rxe_resp.c do_complete: a receive WQE consumed successfully
        }
        final WorkCompletion wc = recvCq.claim();
        if (wc != null) {
            wc.set(w.wrId, status, opcode, qpn, byteLength);
        }
        return wc;
    }

    /**
     * {@code solicited}: the message's last packet had the BTH SE bit (IBTA 9.2), for solicited-only arming. Returns
     * whether the receive CQ was armed for an event as the completion came: its application sleeps on it.
     */
    boolean commitRecv(final WorkCompletion wc, final boolean imm, final int immData, final int srcQp, final boolean grh,
            final boolean solicited) {
        final boolean armed = recvCq.armed() != CqRing.DISARMED;
        if (wc == null) {
            return armed;
        }
        if (imm) {
            wc.immData(immData);
        }
        if (srcQp >= 0) {
            wc.srcQp(srcQp);
        }
        if (grh) {
            wc.wcFlags(WcFlags.GRH);
        }
        wc.solicited(solicited);
        recvCq.commit();
        return armed;
    }

    boolean canRespond() {
        return state == QpState.RTR || state == QpState.RTS || state == QpState.SQD || state == QpState.SQE;
    }

    boolean canRequest() {
        return state == QpState.RTS || state == QpState.SQD;
    }

    /** RC PSNs sent and not yet acknowledged (what the requester's window counts), 0 for other types and states. */
    int unackedPsns() {
        if (type != QpType.RC || !canRequest()) {
            return 0;
        }
        return Math.max(0, Psn.diff(requester.psn, completer.compPsn));
    }

    /**
     * For {@link HeldAckWatch}, under the engine's lock: sends the held ACK if its time is past, as this QP's cycle
     * does (a lone hold that ran out stops the holding, the cycle's rule), counted as this QP's packet. Returns whether
     * it sent one.
     */
    boolean releaseHeldAckIfDue(final long now) {
        if (!canRespond()) {
            return false;
        }
        engine.out.owner(counters);
        try {
            return responder.releaseHeldAckIfDue(now) > 0;
        } finally {
            engine.out.owner(null);
        }
    }

    /**
     * Sends the responder's held ACK now, if it has one and may still answer, counted as this QP's packet: outside
     * this QP's engine cycle (QP destroy, a modify), on the engine's thread or under its lock.
     */
    void releaseHeldAck() {
        if (canRespond()) {
            engine.out.owner(counters);
            try {
                responder.releaseHeldAck();
            } finally {
                engine.out.owner(null);
            }
        }
    }

    /**
     * Nanoseconds from {@code now} until one of this QP's timers is due (retransmission, the end of an RNR wait, the
     * release of a held ACK), {@link Long#MAX_VALUE} if none is armed: how long an idle engine may sleep for it.
     * The same conditions as {@link #run}'s, which fires them.
     */
    long nanosToNextTimer(final long now) {
        if (state == QpState.ERR || state == QpState.RESET) {
            return Long.MAX_VALUE;
        }
        long next = responder.nanosToHeldAckRelease(now);
        if (retransDeadline != 0) {
            next = Math.min(next, retransDeadline - now);
        }
        if (rnrDeadline != 0) {
            next = Math.min(next, rnrDeadline - now);
        }
        return next;
    }

    /** Engine cycle: timers, then the requester; returns work done. */
    int run(final long now, final int budget) {
        int work = flushIfError();
        if (state == QpState.ERR || state == QpState.RESET) {
            return work;
        }
        if (retransDeadline != 0 && now - retransDeadline >= 0) {
            completer.onTimeout(now);
            work++;
        }
        if (rnrDeadline != 0 && now - rnrDeadline >= 0) {
            rnrDeadline = 0;
            work++;
        }
        work += responder.continueReadReply(budget);
        int sent = 0;
        if (canRequest()) {
            sent = requester.run(now, budget);
        }
        return work + sent + responder.releaseHeldAckIfDue(now);
    }

    /** Set at creation (before the QP is added to the engine). */
    public void blockSelfMulticastLoopback(final boolean block) {
        blockSelfMcastLoopback = block;
    }
}
