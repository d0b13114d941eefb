package io.jhca.mlx5.ring;

import org.agrona.DirectBuffer;

import io.jhca.mlx5.cq.CompletionOpcodes;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.mlx5.cq.CqeStatus;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.cq.ErrCqe;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;

/**
 * Turns CQEs into work completions as rdma-core's cq.c {@code mlx5_parse_cqe} does:
 * <ul>
 * <li>requester (REQ): wr_id from the send ring slot of {@code wqe_counter}, opcode from the CQE's send opcode
 *     ({@code handle_good_req}), byte_len for READ and atomics, WITH_IMM for the _IMM opcodes; the slot's WR and
 *     every unsignaled one before it retire;</li>
 * <li>responder (RESP_*): wr_id of the next receive WQE, byte_len = byte_cnt, immediate data, src_qp, SL and GRH
 *     flag (flags_rqpn bits 29:28 non-zero) ({@code handle_responder});</li>
 * <li>errors (REQ_ERR, RESP_ERR): status from the syndrome ({@link CqeStatus}), vendor_err, wr_id as above; the QP
 *     learns of it ({@link CqeOwner#onErrorCompletion}).</li>
 * </ul>
 * CQEs of QPs that no longer exist, and CQE kinds a verbs QP never produces, are consumed and skipped. No allocation.
 */
public final class CqPoller {

    private final CqBuffer ring;
    private final CqeOwners owners;
    private final ErrCqe err = new ErrCqe();
    /**
     * The QP of the last CQE (rdma-core cq.c {@code get_req_context}'s {@code cur_rsc}): consecutive CQEs of one QP
     * skip the QPN lookup. Dropped by {@link #forget} when the QP's CQEs are cleaned away (reset or destroy).
     */
    private int lastQpn = -1;
    private CqeOwner last;

    public CqPoller(CqBuffer ring, CqeOwners owners) {
        this.ring = ring;
        this.owners = owners;
    }

    public CqBuffer ring() {
        return ring;
    }

    /** Fills {@code wc} from the next CQE: 1, or 0 if the ring is empty. Publishes the consumer index. */
    public int poll(WorkCompletion wc) {
        while (true) {
            int offset = ring.next();
            if (offset < 0) {
                return 0;
            }
            boolean filled = parse(offset, wc);
            ring.publishConsumerIndex();
            if (filled) {
                return 1;
            }
        }
    }

    /** The QP is gone or reset: its number may come back as another QP, so the cache must not answer for it. */
    public void forget(int qpn) {
        if (qpn == lastQpn) {
            lastQpn = -1;
            last = null;
        }
    }

    private CqeOwner owner(int qpn) {
        if (qpn == lastQpn) {
            return last;
        }
        CqeOwner qp = owners.byQpn(qpn);
        if (qp != null) {
            lastQpn = qpn;
            last = qp;
        }
        return qp;
    }

    private boolean parse(int offset, WorkCompletion wc) {
        int opcode = ring.opOwn() >>> 4;   // as CqBuffer.next read it
        long tail = Cqe64.tail(ring.buffer(), offset);
        CqeOwner qp = owner(Cqe64.tailQpn(tail));
        if (qp == null) {
            return false;
        }
        switch (opcode) {
            case CqeOpcode.REQ:
                return requester(qp, tail, offset, wc);
            case CqeOpcode.RESP_WR_IMM:
            case CqeOpcode.RESP_SEND:
            case CqeOpcode.RESP_SEND_IMM:
            case CqeOpcode.RESP_SEND_INV:
                return responder(qp, opcode, tail, offset, wc);
            case CqeOpcode.REQ_ERR:
            case CqeOpcode.RESP_ERR:
                return error(qp, opcode, offset, wc);
            default:
                return false;   // RESIZE_CQ, NO_PACKET, SIG_ERR: nothing a verbs QP posted
        }
    }

    private boolean requester(CqeOwner qp, long tail, int offset, WorkCompletion wc) {
        SqBuffer sq = qp.sendRing();
        if (sq == null) {
            return false;
        }
        int counter = Cqe64.tailWqeCounter(tail);
        int sendOpcode = Cqe64.tailSendOpcode(tail);
        WcOpcode op = CompletionOpcodes.requester(sendOpcode);
        if (op == null) {
            op = sq.wcOpcode(counter);
        }
        // byte_cnt is read only where it is the answer (RDMA READ)
        int byteLen = sendOpcode == Mlx5Opcode.RDMA_READ ? Cqe64.byteCntOf(Cqe64.word(ring.buffer(), offset, 40))
                : CompletionOpcodes.requesterByteLen(sendOpcode, 0);
        wc.set(sq.wrId(counter), WcStatus.SUCCESS, op, qp.qpn(), byteLen);
        if (CompletionOpcodes.requesterWithImm(sendOpcode)) {
            wc.wcFlags(WcFlags.WITH_IMM);
        }
        sq.retire(counter);
        return true;
    }

    /**
     * A receive completion, its fields from the CQE's words ({@link Cqe64#word}: one bounds check and one load each)
     * and the SE bit from op_own as {@link CqBuffer#next} read it.
     */
    private boolean responder(CqeOwner qp, int opcode, long tail, int offset, WorkCompletion wc) {
        int counter = Cqe64.tailWqeCounter(tail);
        RqBuffer rq = qp.recvRing();
        long wrId;
        if (rq != null) {
            wrId = rq.complete(counter);
        } else {
            SrqBuffer srq = qp.srqRing();
            if (srq == null) {
                return false;
            }
            wrId = srq.complete(counter);   // the CQE names the SRQ WQE by its index
        }
        DirectBuffer b = ring.buffer();
        int flagsRqpn = Cqe64.flagsRqpnOf(Cqe64.word(b, offset, 24));
        wc.setReceive(wrId, CompletionOpcodes.responder(opcode), qp.qpn(), Cqe64.byteCntOf(Cqe64.word(b, offset, 40)),
                flagsRqpn & 0xffffff, (flagsRqpn >>> 24) & 0xf, Cqe64.slidOf(Cqe64.word(b, offset, 16)),
                ((flagsRqpn >>> 28) & 3) != 0 ? WcFlags.GRH : 0);
        if ((ring.opOwn() & 2) != 0) {   // mlx5dv_get_cqe_se
            wc.solicited(true);
        }
        if (opcode == CqeOpcode.RESP_WR_IMM || opcode == CqeOpcode.RESP_SEND_IMM) {
            wc.immData(Cqe64.immInvalPkeyOf(Cqe64.word(b, offset, 32)));   // big-endian on the wire: the sender's
        } else if (opcode == CqeOpcode.RESP_SEND_INV) {
            wc.invalidatedRkey(Cqe64.immInvalPkeyOf(Cqe64.word(b, offset, 32)));   // sets WITH_INV (cq.c: be32toh)
        }
        if (qp.isUd() && opcode != CqeOpcode.RESP_SEND_IMM) {
            wc.pkeyIndex(Cqe64.immInvalPkeyOf(Cqe64.word(b, offset, 32)) & 0xffff);
        }
        return true;
    }

    private boolean error(CqeOwner qp, int opcode, int offset, WorkCompletion wc) {
        err.wrap(ring.buffer(), offset);
        int syndrome = err.syndrome();
        WcStatus status = CqeStatus.toWcStatus(syndrome);
        int counter = err.wqeCounter();
        boolean requester = opcode == CqeOpcode.REQ_ERR;
        if (requester) {
            SqBuffer sq = qp.sendRing();
            if (sq == null) {
                return false;
            }
            wc.set(sq.wrId(counter), status, sq.wcOpcode(counter), qp.qpn(), 0);
            sq.retire(counter);
        } else {
            RqBuffer rq = qp.recvRing();
            SrqBuffer srq = rq == null ? qp.srqRing() : null;
            if (rq == null && srq == null) {
                return false;
            }
            wc.set(rq != null ? rq.complete(counter) : srq.complete(counter), status, WcOpcode.RECV, qp.qpn(), 0);
        }
        wc.vendorErr(err.vendorErrSynd());
        if (syndrome != CqeSyndrome.WR_FLUSH_ERR) {
            qp.onErrorCompletion(requester, status);
        }
        return true;
    }
}
