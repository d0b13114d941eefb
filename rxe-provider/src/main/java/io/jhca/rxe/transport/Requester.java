package io.jhca.rxe.transport;

import io.jhca.rxe.wire.Deth;
import io.jhca.rxe.wire.Opcode;
import io.jhca.rxe.wire.Psn;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * The requester of a QP (rxe_req.c): turns send WQEs into request packets.
 *
 * <p>RC/UC messages are cut by the path MTU into FIRST, MIDDLE..., LAST or a single ONLY packet; FIRST and MIDDLE
 * carry exactly one MTU. RETH goes on FIRST/ONLY (DMA length = the whole message), ImmDt on LAST/ONLY, SE on the
 * last packet of a solicited SEND or WRITE-with-immediate. RC sets AckReq on the last packet of a message and when
 * more than {@link TransportQp#MAX_PKT_PER_ACK} packets went without one. A READ request consumes one PSN per
 * expected response packet, an atomic one. RC stops {@link TransportQp#MAX_UNACKED_PSNS} PSNs past the oldest
 * unacknowledged one, when the device's QPs together have {@link TransportQp#DEVICE_MAX_UNACKED_PSNS} unacknowledged
 * ({@link Engine#psnRoom()}), before a READ/atomic beyond max_rd_atomic outstanding, and before a fenced WQE while
 * earlier ones are incomplete. UD sends one SEND_ONLY with DETH; a UD message longer than the port MTU is
 * silently not sent and completes successfully, as rxe does (C10-93.1.1).
 *
 * <p>The position is (reqIndex, psn). A WQE gets its PSN range when it starts; the packet at a PSN is found from
 * it (offset = (psn - firstPsn) * MTU), so a retry rewinds by setting psn back and resumes mid-message, and a READ
 * is re-issued for its remaining bytes only.
 */
final class Requester {

    private final TransportQp qp;
    /** Next PSN to send. */
    int psn;
    /** One past the highest PSN ever sent. */
    int psnHigh;
    /**
     * How many PSNs before {@link #psnHigh} were sent since the QP got its send PSN, at most 2^23: a response
     * is for a PSN sent only if it lies in [psnHigh - sentSpan, psnHigh). Capped at half the PSN space, where
     * modular comparison stops being able to order two PSNs.
     */
    int sentSpan;
    /** Packets since the last AckReq (rxe qp->req.noack_pkts). */
    private int noackPkts;
    /** READ/atomic WQEs sent and not completed. */
    int rdAtomicInFlight;

    Requester(final TransportQp qp) {
        this.qp = qp;
    }

    void reset(final int startPsn) {
        psn = startPsn;
        psnHigh = startPsn;
        sentSpan = 0;
        noackPkts = 0;
        rdAtomicInFlight = 0;
    }

    /** True if a packet with {@code p} was sent (a response for it can be genuine). */
    boolean wasSent(final int p) {
        return ((psnHigh - 1 - p) & Psn.MASK) < sentSpan; // distance back from the highest PSN sent
    }

    /** Go back to the oldest incomplete WQE and PSN (retry after a NAK, a timeout or an RNR wait). */
    void rewind() {
        qp.sq.reqIndex = qp.sq.compIndex;
        psn = qp.completer.compPsn;
        noackPkts = 0;
    }

    int run(final long now, final int budget) {
        if (qp.rnrDeadline != 0) {
            return 0;
        }
        final SendRing sq = qp.sq;
        final long pi = sq.published();
        final boolean rc = qp.type == QpType.RC;
        int sent = 0;
        while (sent < budget && qp.canRequest()) {
            if (rc) {
                catchUp();
            }
            if (sq.reqIndex == pi) {
                break;
            }
            final SendWqe w = sq.at(sq.reqIndex);
            if (w.error != null) {
                qp.completer.completeFailedHead();
                break;
            }
            if (w.opcode.isLocal()) {
                if (sq.compIndex != sq.reqIndex) {
                    break; // runs once everything before it completed, so it is ordered with the QP's traffic
                }
                executeLocal(w);
                sent++;
                continue;
            }
            if (!w.assigned && !start(w, rc)) {
                break;
            }
            if (rc && Psn.compare(psn, Psn.add(qp.completer.compPsn, TransportQp.MAX_UNACKED_PSNS)) > 0) {
                break; // rxe_req.c: req.psn > comp.psn + RXE_MAX_UNACKED_PSNS
            }
            if (rc && qp.engine.psnRoom() <= 0) {
                break; // the device's other QPs have the receiver's room
            }
            final int before = psn;
            if (!emit(w, rc, now)) {
                break;
            }
            if (rc) {
                qp.engine.spendPsnRoom(Psn.diff(psn, before));   // a READ takes one PSN per response packet
            }
            sent++;
        }
        return sent;
    }

    /** A completer that moved past us (an ACK for what we were resending) pulls us forward. */
    private void catchUp() {
        final SendRing sq = qp.sq;
        if (sq.compIndex - sq.reqIndex > 0) {
            sq.reqIndex = sq.compIndex;
        }
        if (Psn.compare(psn, qp.completer.compPsn) < 0) {
            psn = qp.completer.compPsn;
        }
    }

    /** Checks whether a new WQE may start now, validates it and assigns its PSN range. */
    private boolean start(final SendWqe w, final boolean rc) {
        final SendRing sq = qp.sq;
        if (qp.state == QpState.SQD) {
            return false; // draining: finish what started, start nothing new
        }
        if (rc && (w.flags & SendFlags.FENCE) != 0 && sq.compIndex != sq.reqIndex) {
            return false; // fence: wait for every earlier WQE (rxe waits for the whole queue before it)
        }
        final boolean readOrAtomic = w.isReadOrAtomic();
        if (readOrAtomic && !w.rdAtomicCounted && rdAtomicInFlight >= qp.maxRdAtomic) {
            return false;
        }
        if (!w.inline && !validateSges(w)) {
            fail(w, WcStatus.LOC_PROT_ERR);
            return false;
        }
        if (readOrAtomic && !w.rdAtomicCounted) {
            w.rdAtomicCounted = true;
            rdAtomicInFlight++;
        }
        w.firstPsn = psn;
        w.lastPsn = Psn.add(psn, packets(w) - 1);
        w.assigned = true;
        return true;
    }

    /** PSNs a WQE consumes: one per MTU of payload (at least one); an atomic one. */
    private int packets(final SendWqe w) {
        if (qp.type == QpType.UD || w.opcode.isAtomic() || w.length == 0) {
            return 1;
        }
        return (int) ((w.length + qp.mtu - 1) / qp.mtu);
    }

    private boolean validateSges(final SendWqe w) {
        final boolean write = w.isReadOrAtomic(); // READ data and atomic results land in the SGEs
        final MemoryAccess mem = qp.engine.memory;
        for (int i = 0; i < w.numSge; i++) {
            if (mem.checkLocal(qp.pd, w.sgeAddr[i], w.sgeLength[i], w.sgeLkey[i], write) != MemoryAccess.OK) {
                return false;
            }
        }
        return true;
    }

    /**
     * BIND_MW or LOCAL_INV at the head of the queue (rxe_req.c rxe_do_local_ops): done at once, no packet; a
     * refused bind completes with MW_BIND_ERR, a refused invalidation with LOC_QP_OP_ERR, and the QP goes to ERR.
     */
    private void executeLocal(final SendWqe w) {
        final boolean bind = w.opcode == WrOpcode.BIND_MW;
        final String error = bind ? WindowOps.bind(qp, w) : WindowOps.invalidate(qp, w.invalidateRkey);
        qp.sq.reqIndex++;
        if (error != null) {
            qp.count(RxeCounters.Counter.SEND_ERR);
            qp.completer.completeHead(bind ? WcStatus.MW_BIND_ERR : WcStatus.LOC_QP_OP_ERR);
            return;
        }
        qp.completer.completeHead(WcStatus.SUCCESS);
    }

    /** A local error: the WQE completes with {@code status} when it is the oldest, then the QP goes to ERR. */
    void fail(final SendWqe w, final WcStatus status) {
        w.error = status;
        qp.count(RxeCounters.Counter.SEND_ERR);
        qp.completer.completeFailedHead();
    }

    /** Sends the packet at {@code psn} of {@code w}; false if nothing could be sent. */
    private boolean emit(final SendWqe w, final boolean rc, final long now) {
        final WrOpcode op = w.opcode;
        final int at = psn;
        final boolean ok;
        if (op == WrOpcode.RDMA_READ) {
            ok = emitRead(w);
        } else if (op.isAtomic()) {
            ok = emitAtomic(w);
        } else if (qp.type == QpType.UD) {
            ok = emitUd(w);
        } else {
            ok = emitSendWrite(w, rc);
        }
        if (!ok) {
            return false;
        }
        if (rc && Psn.compare(at, psnHigh) < 0) {
            qp.count(RxeCounters.Counter.RETRANSMITTED_PKTS); // this PSN went out before (go-back-N)
        }
        if (Psn.compare(psn, psnHigh) > 0) {
            sentSpan = Math.min(Psn.HALF, sentSpan + Psn.diff(psn, psnHigh));
            psnHigh = psn;
        }
        if (Psn.compare(psn, w.lastPsn) > 0) { // the WQE's last packet is out
            qp.sq.reqIndex++;
            if (!rc) {
                // UC and UD have no acknowledgements: the WQE is done once sent (rxe_req.c complete_wqe)
                final WorkCompletion wc = qp.claimSend(w, WcStatus.SUCCESS);
                qp.sq.completeHead();
                qp.commitSend(wc);
                qp.completer.compPsn = psn;
            }
        }
        if (rc && qp.retransDeadline == 0 && qp.timeoutNanos != 0) {
            // rxe: armed when a packet goes out and none is pending. Read the clock now, not the duty cycle's cached
            // time: a long cycle (JIT warm-up) would otherwise start the timer early and retransmit needlessly.
            qp.retransDeadline = System.nanoTime() + qp.timeoutNanos;
        }
        return true;
    }

    private boolean ackReq(final boolean end) {
        // rxe_req.c: ack_req = end of message || noack_pkts++ > RXE_MAX_PKT_PER_ACK
        final boolean ack = end || noackPkts++ > TransportQp.MAX_PKT_PER_ACK;
        if (ack) {
            noackPkts = 0;
        }
        return ack;
    }

    private boolean emitSendWrite(final SendWqe w, final boolean rc) {
        final int mtu = qp.mtu;
        final long offset = (long) Psn.diff(psn, w.firstPsn) * mtu;
        final long remaining = w.length - offset;
        final int payload = (int) Math.min(remaining, mtu);
        final boolean first = offset == 0;
        final boolean last = remaining <= mtu;
        final WrOpcode op = w.opcode;
        final boolean send = op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.SEND_WITH_INV;
        final boolean inv = op == WrOpcode.SEND_WITH_INV;
        final int base = qp.type == QpType.UC ? 0x20 : 0x00; // ib_pack.h IB_OPCODE_UC = 0x20
        int opcode;
        if (send) {
            if (first && last) {
                opcode = inv ? Opcode.RC_SEND_ONLY_WITH_INVALIDATE
                        : op.hasImmediate() ? Opcode.RC_SEND_ONLY_WITH_IMMEDIATE : Opcode.RC_SEND_ONLY;
            } else if (first) {
                opcode = Opcode.RC_SEND_FIRST;
            } else if (last) {
                opcode = inv ? Opcode.RC_SEND_LAST_WITH_INVALIDATE
                        : op.hasImmediate() ? Opcode.RC_SEND_LAST_WITH_IMMEDIATE : Opcode.RC_SEND_LAST;
            } else {
                opcode = Opcode.RC_SEND_MIDDLE;
            }
        } else {
            if (first && last) {
                opcode = op.hasImmediate() ? Opcode.RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE : Opcode.RC_RDMA_WRITE_ONLY;
            } else if (first) {
                opcode = Opcode.RC_RDMA_WRITE_FIRST;
            } else if (last) {
                opcode = op.hasImmediate() ? Opcode.RC_RDMA_WRITE_LAST_WITH_IMMEDIATE : Opcode.RC_RDMA_WRITE_LAST;
            } else {
                opcode = Opcode.RC_RDMA_WRITE_MIDDLE;
            }
        }
        opcode |= base;
        // rxe_req.c: SE on the last packet of a solicited SEND or WRITE with immediate
        final boolean se = last && (w.flags & SendFlags.SOLICITED) != 0 && (send || op.hasImmediate());
        final boolean ack = rc && ackReq(last);
        final PacketOut out = qp.engine.out;
        final int at = out.begin(opcode, se, payload, qp.destQpn, ack, psn);
        if (Opcode.rethOffset(opcode) != Opcode.NO_HEADER) {
            out.reth().set(w.remoteAddr, w.rkey, (int) w.length); // DMA length = whole message
        }
        if (Opcode.immDtOffset(opcode) != Opcode.NO_HEADER) {
            out.immDt().immediate(w.imm);
        }
        if (Opcode.iethOffset(opcode) != Opcode.NO_HEADER) {
            out.ieth(w.invalidateRkey);
        }
        if (!copyPayload(w, offset, at, payload)) {
            return false;
        }
        if (!qp.responder.sendRequest(out) && !rc) {
            return false;   // UC: no retransmission would recover it; sent again next cycle (see emitUd)
        }
        psn = Psn.next(psn);
        return true;
    }

    private boolean copyPayload(final SendWqe w, final long offset, final int at, final int payload) {
        if (payload == 0) {
            return true;
        }
        final PacketOut out = qp.engine.out;
        if (w.inline) {
            out.buffer.putBytes(at, w.inlineData, (int) offset, payload);
            return true;
        }
        final int status = qp.engine.memory.gather(qp.pd, w.sgeAddr, w.sgeLength, w.sgeLkey, w.numSge, offset,
                out.buffer, at, payload);
        if (status != MemoryAccess.OK) {
            fail(w, WcStatus.LOC_PROT_ERR); // e.g. the MR was deregistered while the message was on its way
            return false;
        }
        return true;
    }

    private boolean emitRead(final SendWqe w) {
        final long offset = (long) Psn.diff(psn, w.firstPsn) * qp.mtu; // > 0 when resuming a partial READ
        final PacketOut out = qp.engine.out;
        out.begin(Opcode.RC_RDMA_READ_REQUEST, false, 0, qp.destQpn, ackReq(true), psn);
        out.reth().set(w.remoteAddr + offset, w.rkey, (int) (w.length - offset));
        qp.responder.sendRequest(out);
        psn = Psn.next(w.lastPsn);
        return true;
    }

    private boolean emitAtomic(final SendWqe w) {
        final PacketOut out = qp.engine.out;
        final boolean cmpSwap = w.opcode == WrOpcode.ATOMIC_CMP_AND_SWP;
        out.begin(cmpSwap ? Opcode.RC_COMPARE_SWAP : Opcode.RC_FETCH_ADD, false, 0, qp.destQpn, ackReq(true), psn);
        // rxe_req.c: swap_add = swap (CMP_SWP) or the addend; compare only for CMP_SWP
        out.atomicEth().set(w.remoteAddr, w.rkey, cmpSwap ? w.swap : w.compareAdd, cmpSwap ? w.compareAdd : 0);
        qp.responder.sendRequest(out);
        psn = Psn.next(psn);
        return true;
    }

    private boolean emitUd(final SendWqe w) {
        final int payload = (int) w.length;
        if (w.length <= qp.engine.portMtu) {
            final PacketOut out = qp.engine.out;
            final int opcode = w.opcode.hasImmediate() ? Opcode.UD_SEND_ONLY_WITH_IMMEDIATE : Opcode.UD_SEND_ONLY;
            final boolean se = (w.flags & SendFlags.SOLICITED) != 0;
            final int at = out.begin(opcode, se, payload, w.remoteQpn, false, psn);
            // rxe_req.c: Q_Key GSI_QKEY when the sender is QP1, else the WR's remote_qkey
            out.deth().set(qp.qpn == 1 ? Deth.GSI_QKEY : w.remoteQkey, qp.qpn);
            if (w.opcode.hasImmediate()) {
                out.immDt().immediate(w.imm);
            }
            if (!copyPayload(w, 0, at, payload)) {
                return false;
            }
            if (!out.send(w.udPeer)) {
                // not handed to the network (no room in the socket): nothing would ever resend it and the WR would
                // complete as sent. Linux rxe_req.c sends it again later (-EAGAIN from rxe_xmit_packet); so does this
                return false;
            }
        }
        psn = Psn.next(psn);
        return true;
    }
}
