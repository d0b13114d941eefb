package io.jhca.rxe.transport;

import io.jhca.rxe.wire.Aeth;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.Psn;
import io.jhca.rxe.wire.RnrTimer;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * The completer of an RC QP (rxe_comp.c): consumes ACKs, NAKs, READ responses and atomic ACKs, completes send
 * WQEs in order and drives retries.
 *
 * <ul>
 * <li>A response PSN past the oldest WQE's last PSN acknowledges it implicitly if it is a SEND/WRITE; for a
 * READ/atomic it means its response went missing: retry.</li>
 * <li>ACK: everything up to its PSN is acknowledged. NAK PSN-sequence-error: everything before its PSN is, then
 * go-back-N from it. RNR NAK: wait the encoded time, then resend from its PSN; rnr_retry counts these, 7 means
 * for ever. NAK invalid request / remote access / remote operational error: the WQE completes with
 * REM_INV_REQ_ERR / REM_ACCESS_ERR / REM_OP_ERR and the QP goes to ERR.</li>
 * <li>Local ACK timeout (4.096 us * 2^timeout): go-back-N; retry_cnt counts these and NAK retries, and, as in
 * rxe, 7 means for ever (rocev2.md §3.4). Exhausted: RETRY_EXC_ERR.</li>
 * <li>READ response data is placed by PSN: the packet at PSN p carries bytes from (p - firstPsn) * MTU, so a
 * re-issued partial READ and late duplicates land where they belong; only the packet at the expected PSN is
 * taken.</li>
 * </ul>
 */
final class Completer {

    private final TransportQp qp;
    /** Oldest PSN not yet acknowledged (rxe qp->comp.psn). */
    int compPsn;
    int retryLeft;
    int rnrLeft;
    /** A retry was started and nothing was acknowledged since (rxe comp.started_retry). */
    private boolean nakRetryStarted;
    /** 8-byte scratch for atomic results (host order, as rxe writes them). */
    private final org.agrona.concurrent.UnsafeBuffer atomicResult =
            new org.agrona.concurrent.UnsafeBuffer(new byte[8]);

    Completer(final TransportQp qp) {
        this.qp = qp;
    }

    void reset(final int psn) {
        compPsn = psn;
        retryLeft = qp.retryCnt;
        rnrLeft = qp.rnrRetry;
        nakRetryStarted = false;
    }

    private void resetRetryCounters() {
        retryLeft = qp.retryCnt;
        rnrLeft = qp.rnrRetry;
    }

    private boolean outstanding() {
        return Psn.compare(qp.requester.psnHigh, compPsn) > 0 || qp.sq.compIndex != qp.sq.reqIndex;
    }

    /** A response packet for this QP (the engine checked state, type and addresses). */
    void onResponse(final RxPacket p, final long now) {
        final int psn = p.psn;
        final SendRing sq = qp.sq;
        if (!qp.requester.wasSent(psn)) {
            // A ghost: no request carried this PSN. Dropped before any comparison with a WQE's PSNs, which is
            // meaningful only within the window sent (modular order flips 2^23 away); it must never complete a
            // WQE whose last packet has not gone out (rxe_comp.c check_psn).
            qp.count(RxeCounters.Counter.DROP_GHOST_RESPONSE);
            return;
        }
        SendWqe w;
        while (true) {
            if (sq.compIndex == sq.published()) {
                qp.count(RxeCounters.Counter.DROP_UNEXPECTED_RESPONSE);
                return;
            }
            w = sq.at(sq.compIndex);
            if (!w.assigned || w.error != null) {
                qp.count(RxeCounters.Counter.DROP_UNEXPECTED_RESPONSE);
                return;
            }
            if (Psn.compare(psn, w.lastPsn) <= 0) {
                break;
            }
            if (w.isReadOrAtomic()) {
                retry(now, false); // rxe: response beyond a READ/atomic = its response is missing
                return;
            }
            if (Psn.compare(compPsn, Psn.next(w.lastPsn)) < 0) {
                compPsn = Psn.next(w.lastPsn);
            }
            completeHead(WcStatus.SUCCESS);
            if (qp.state == io.jhca.verbs.QpState.ERR) {
                return;
            }
        }
        if (Psn.compare(psn, compPsn) < 0) {
            if (psn == w.lastPsn && !w.isReadOrAtomic()) {
                completeHead(WcStatus.SUCCESS); // rxe check_psn: a retried packet's ack completes its WQE
            } else {
                qp.count(RxeCounters.Counter.DROP_STALE_DUPLICATE);
            }
            return;
        }
        final int op = p.opcode;
        switch (op) {
            case Opcode.RC_RDMA_READ_RESPONSE_FIRST:
            case Opcode.RC_RDMA_READ_RESPONSE_MIDDLE:
            case Opcode.RC_RDMA_READ_RESPONSE_LAST:
            case Opcode.RC_RDMA_READ_RESPONSE_ONLY:
                onReadResponse(p, w, now);
                break;
            case Opcode.RC_ATOMIC_ACKNOWLEDGE:
                onAtomicAck(p, w, now);
                break;
            case Opcode.RC_ACKNOWLEDGE:
                onAck(p, w, now);
                break;
            default:
                qp.count(RxeCounters.Counter.DROP_UNEXPECTED_RESPONSE);
        }
    }

    private void onReadResponse(final RxPacket p, final SendWqe w, final long now) {
        if (w.opcode != WrOpcode.RDMA_READ || p.psn != compPsn) {
            // not ours, or an earlier response is missing: wait for the retry (rxe drops these too)
            qp.count(RxeCounters.Counter.DROP_UNEXPECTED_RESPONSE);
            return;
        }
        if (p.has(Opcode.HAS_AETH) && !p.aeth().isAck()) {
            qp.count(RxeCounters.Counter.DROP_UNEXPECTED_RESPONSE);
            return;
        }
        final int mtu = qp.mtu;
        final long offset = (long) Psn.diff(p.psn, w.firstPsn) * mtu;
        final long remaining = w.length - offset;
        final boolean end = p.has(Opcode.END);
        final int n = p.payloadLength;
        if (end ? n != remaining : (n != mtu || remaining <= mtu)) {
            completeHead(WcStatus.BAD_RESP_ERR); // a response that does not fit the request
            return;
        }
        if (n > 0) {
            final int status = qp.engine.memory.scatter(qp.pd, w.sgeAddr, w.sgeLength, w.sgeLkey, w.numSge, offset,
                    p.buffer, p.payloadIndex, n);
            if (status != MemoryAccess.OK) {
                completeHead(WcStatus.LOC_PROT_ERR);
                return;
            }
        }
        compPsn = Psn.next(p.psn);
        progress(now);
        if (end) {
            completeHead(WcStatus.SUCCESS);
        }
    }

    private void onAtomicAck(final RxPacket p, final SendWqe w, final long now) {
        if (!w.opcode.isAtomic() || p.psn != w.firstPsn || !p.aeth().isAck()) {
            qp.count(RxeCounters.Counter.DROP_UNEXPECTED_RESPONSE);
            return;
        }
        // rxe_comp.c do_atomic: the original value is stored in host order at the SGE
        atomicResult.putLong(0, p.atomicAckEth().origRemoteData(), java.nio.ByteOrder.nativeOrder());
        final int status = qp.engine.memory.scatter(qp.pd, w.sgeAddr, w.sgeLength, w.sgeLkey, w.numSge, 0,
                atomicResult, 0, 8);
        if (status != MemoryAccess.OK) {
            completeHead(WcStatus.LOC_PROT_ERR);
            return;
        }
        compPsn = Psn.next(p.psn);
        progress(now);
        completeHead(WcStatus.SUCCESS);
    }

    private void onAck(final RxPacket p, final SendWqe w, final long now) {
        final Aeth aeth = p.aeth();
        final int syndrome = aeth.syndrome();
        switch (Aeth.type(syndrome)) {
            case Aeth.TYPE_ACK:
                if (w.isReadOrAtomic()) {
                    qp.count(RxeCounters.Counter.DROP_UNEXPECTED_RESPONSE); // acks do not end reads
                    return;
                }
                compPsn = Psn.next(p.psn);
                progress(now);
                if (p.psn == w.lastPsn) {
                    completeHead(WcStatus.SUCCESS);
                }
                return;
            case Aeth.TYPE_RNR_NAK:
                qp.count(RxeCounters.Counter.RCVD_RNR_ERR);
                if (Psn.compare(p.psn, compPsn) > 0) {
                    compPsn = p.psn; // everything before the refused packet was accepted
                }
                if (rnrLeft == 0) {
                    qp.count(RxeCounters.Counter.RETRY_RNR_EXCEEDED_ERR);
                    completeHead(WcStatus.RNR_RETRY_EXC_ERR);
                    return;
                }
                if (qp.rnrRetry != 7) { // 7 = retry for ever (IBTA, rxe)
                    rnrLeft--;
                }
                qp.requester.rewind();
                qp.retransDeadline = 0;
                qp.rnrDeadline = now + RnrTimer.nanos(Aeth.value(syndrome));
                return;
            case Aeth.TYPE_NAK:
                switch (Aeth.value(syndrome)) {
                    case Aeth.NAK_PSN_SEQUENCE_ERROR:
                        qp.count(RxeCounters.Counter.RCVD_SEQ_ERR);
                        if (Psn.compare(p.psn, compPsn) > 0) {
                            compPsn = p.psn; // a NAK implicitly acks everything before its PSN
                        }
                        retry(now, false);
                        return;
                    case Aeth.NAK_INVALID_REQUEST:
                        qp.count(RxeCounters.Counter.RCVD_NAK_INV_REQ);
                        completeHead(WcStatus.REM_INV_REQ_ERR);
                        return;
                    case Aeth.NAK_REMOTE_ACCESS_ERROR:
                        qp.count(RxeCounters.Counter.RCVD_NAK_REM_ACCESS);
                        completeHead(WcStatus.REM_ACCESS_ERR);
                        return;
                    default: // remote operational error and unknown codes (rxe_comp.c)
                        qp.count(RxeCounters.Counter.RCVD_NAK_REM_OP);
                        completeHead(WcStatus.REM_OP_ERR);
                        return;
                }
            default:
                qp.count(RxeCounters.Counter.DROP_UNEXPECTED_RESPONSE);
        }
    }

    /** Something was acknowledged: fresh retry budget, timer restarted while packets are outstanding. */
    private void progress(final long now) {
        resetRetryCounters();
        nakRetryStarted = false;
        qp.retransDeadline = outstanding() && qp.timeoutNanos != 0 ? now + qp.timeoutNanos : 0;
    }

    /**
     * Go-back-N from compPsn, charged to retry_cnt. Once a retry was started by a NAK or a missing response, no
     * other starts until something is acknowledged or the timer fires (rxe comp.started_retry).
     */
    private void retry(final long now, final boolean fromTimer) {
        if (!fromTimer && nakRetryStarted) {
            return;
        }
        if (retryLeft == 0) {
            qp.count(RxeCounters.Counter.RETRY_EXCEEDED_ERR);
            completeHead(WcStatus.RETRY_EXC_ERR);
            return;
        }
        if (qp.retryCnt != 7) { // rxe never decrements 7 (rocev2.md §3.4)
            retryLeft--;
        }
        nakRetryStarted = true;
        if (Psn.compare(qp.requester.psnHigh, compPsn) > 0) { // rxe: pointless once the last possible ack arrived
            qp.count(RxeCounters.Counter.COMPLETER_RETRY_ERR);
            qp.requester.rewind();
        }
        qp.retransDeadline = qp.timeoutNanos != 0 ? now + qp.timeoutNanos : 0;
    }

    /** The retransmit timer fired. */
    void onTimeout(final long now) {
        if (!outstanding()) {
            qp.retransDeadline = 0;
            return;
        }
        nakRetryStarted = false;
        qp.count(RxeCounters.Counter.LOCAL_ACK_TIMEOUT_ERR);
        retry(now, true);
    }

    /** Completes the oldest WQE; an error status moves the QP to ERR (which flushes the rest). */
    void completeHead(final WcStatus status) {
        final SendRing sq = qp.sq;
        final SendWqe w = sq.at(sq.compIndex);
        if (w.rdAtomicCounted) {
            w.rdAtomicCounted = false;
            qp.requester.rdAtomicInFlight--;
        }
        final WorkCompletion wc = qp.claimSend(w, status);
        sq.completeHead();
        if (status != WcStatus.SUCCESS) {
            qp.markError(null, null); // in ERR before the error completion can be polled
            qp.commitSend(wc);
            qp.flush();
            return;
        }
        qp.commitSend(wc);
        if (!outstanding()) {
            qp.retransDeadline = 0;
        }
        completeFailedHead();
    }

    /** If the oldest WQE failed locally (requester), complete it now with its error. */
    void completeFailedHead() {
        final SendRing sq = qp.sq;
        if (sq.compIndex != sq.published() && sq.compIndex == sq.reqIndex) {
            final SendWqe w = sq.at(sq.compIndex);
            if (w.error != null) {
                completeHead(w.error);
            }
        }
    }
}
