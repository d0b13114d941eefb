package io.jhca.mlx5.ring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

import org.agrona.UnsafeApi;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.doorbell.Fences;
import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.mlx5.cq.CqeStatus;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.verbs.WcStatus;

/**
 * A completion queue polled directly, as a C program polls one through rdma-core's mlx5dv: {@link #poll} consumes the
 * next CQE and keeps its fields for the getters (opcode, QPN, {@code wqe_counter}, byte count, immediate, syndromes).
 * Nothing is looked up for a requester CQE: the caller knows its WQE by the counter and retires it from its
 * {@link DirectSq}. A receive CQE completes the receive WQE of its QP's receive queue or SRQ (posted through the
 * verbs) and {@link #recvWrId} is that WR's wr_id; an error CQE moves its QP to the error state, as the verbs poll
 * does. Single poller.
 *
 * <p>The consumer index is this object's; the CQ's clean on a QP's reset or destroy goes through {@link #clean}, and
 * an arm reads {@link #consumerIndex}. When the CQ is destroyed, reports an error (an overrun) or its device dies, the
 * provider {@link #invalidate}s it: the next poll throws, at once after a destroy on the polling thread, and else at the
 * latest when the ring looks empty (the reason is read with acquire there, so a polling loop cannot miss it).
 */
public final class DirectCq {

    private static final boolean NATIVE_LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;
    private static final VarHandle INVALID_REASON;

    static {
        try {
            INVALID_REASON = MethodHandles.lookup().findVarHandle(DirectCq.class, "invalidReason", String.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final CqBuffer ring;
    private final CqeOwners owners;
    /** Address of CQE 0, taken once: the ring's view keeps the memory mapped while this object holds the ring. */
    private final long base;
    private final int mask;
    private final int ncqe;
    /** The consumer index word of the CQ's doorbell record. */
    private final long dbrAddress;
    private int ci;
    /**
     * Why this CQ may no longer be polled, or null: read plain at every poll (one load), and with acquire when the ring
     * looks empty ({@link #INVALID_REASON}), so that a loop polling an empty ring sees another thread's invalidate.
     */
    private String invalidReason;
    private long tail;
    private int opcode;
    private int byteCnt;
    private int immInvalPkey;
    private int flagsRqpn;
    private int syndrome;
    private int vendorSyndrome;
    private long recvWrId;

    /**
     * @param ring   the CQ's ring, off-heap, with the consumer index its verbs poll left
     * @param owners the CQ's QPs by number, for receive and error CQEs
     */
    public DirectCq(CqBuffer ring, CqeOwners owners) {
        UnsafeBuffer b = ring.buffer();
        if (b.byteArray() != null) {
            throw new IllegalArgumentException("a direct CQ needs off-heap ring memory");
        }
        this.ring = ring;
        this.owners = owners;
        this.base = b.addressOffset();
        this.ncqe = ring.entries();
        this.mask = ncqe - 1;
        this.dbrAddress = ring.record().address() + DoorbellRecord.CQ_SET_CI_OFFSET;
        this.ci = ring.consumerIndex();
    }

    /**
     * Consumes the next CQE and publishes the consumer index (cq.c {@code update_cons_index}): true, or false if the
     * ring is empty. Its fields are read before the index goes back to the device, which may then write the slot again.
     *
     * @throws IllegalStateException once the provider invalidated this CQ (destroyed, in error, device dead)
     */
    public boolean poll() {
        String invalidated = invalidReason;
        if (invalidated != null) {
            throw new IllegalStateException(invalidated);
        }
        int c = ci;
        long cqe = base + ((long) (c & mask) << 6);
        int opOwn = UnsafeApi.getByteVolatile(null, cqe + Cqe64.OP_OWN_OFFSET) & 0xff;
        if (!Cqe64.isSoftwareOwned(opOwn, c, ncqe)) {
            String why = (String) INVALID_REASON.getAcquire(this);   // another thread's invalidate: seen here at the latest
            if (why != null) {
                throw new IllegalStateException(why);
            }
            return false;
        }
        Fences.ownerBeforeCqeBody();
        int op = opOwn >>> 4;
        long t = load(cqe + Cqe64.SOP_DROP_QPN_OFFSET);
        tail = t;
        opcode = op;
        byteCnt = Cqe64.byteCntOf(load(cqe + 40));
        if (op != CqeOpcode.REQ) {
            slowFields(op, cqe, Cqe64.tailQpn(t), Cqe64.tailWqeCounter(t));
        }
        ci = c + 1;
        int ciWord = (c + 1) & 0xffffff;   // be32, one plain store, as update_cons_index
        UnsafeApi.putInt(null, dbrAddress, NATIVE_LITTLE_ENDIAN ? Integer.reverseBytes(ciWord) : ciWord);
        return true;
    }

    /** Every later poll throws with {@code reason} (the provider's: CQ destroyed, CQ error, device dead). */
    public void invalidate(String reason) {
        INVALID_REASON.setRelease(this, reason);
    }

    /** The consumer index polled so far (free-running), what an arm carries. */
    public int consumerIndex() {
        return ci;
    }

    /**
     * Drops the CQEs of a QP reset or destroyed ({@link CqBuffer#clean(int, SrqBuffer)}) with this poller's index, and
     * takes the index the clean left; not while this CQ is polled.
     */
    public int clean(int qpn, SrqBuffer srq) {
        ring.consumedTo(ci);
        int n = ring.clean(qpn, srq);
        ci = ring.consumerIndex();
        return n;
    }

    /** Receive and error CQEs: their other fields, the receive queue's wr_id, the QP's error state. */
    private void slowFields(int op, long cqe, int qpn, int counter) {
        immInvalPkey = Cqe64.immInvalPkeyOf(load(cqe + 32));
        flagsRqpn = Cqe64.flagsRqpnOf(load(cqe + 24));
        recvWrId = 0;
        syndrome = 0;
        vendorSyndrome = 0;
        CqeOwner qp = owners.byQpn(qpn);
        switch (op) {
            case CqeOpcode.RESP_WR_IMM:
            case CqeOpcode.RESP_SEND:
            case CqeOpcode.RESP_SEND_IMM:
            case CqeOpcode.RESP_SEND_INV:
                recvWrId = completeRecv(qp, counter);
                break;
            case CqeOpcode.REQ_ERR:
            case CqeOpcode.RESP_ERR: {
                long w48 = load(cqe + 48);   // bytes 54, 55: vendor_err_synd, syndrome
                vendorSyndrome = (int) (w48 >>> 8) & 0xff;
                syndrome = (int) w48 & 0xff;
                boolean requester = op == CqeOpcode.REQ_ERR;
                if (!requester) {
                    recvWrId = completeRecv(qp, counter);
                }
                if (qp != null && syndrome != CqeSyndrome.WR_FLUSH_ERR) {
                    qp.onErrorCompletion(requester, CqeStatus.toWcStatus(syndrome));
                }
                break;
            }
            default:
                break;
        }
    }

    private static long completeRecv(CqeOwner qp, int counter) {
        if (qp == null) {
            return 0;
        }
        RqBuffer rq = qp.recvRing();
        if (rq != null) {
            return rq.complete(counter);
        }
        SrqBuffer srq = qp.srqRing();
        return srq != null ? srq.complete(counter) : 0;
    }

    private static long load(long address) {
        long raw = UnsafeApi.getLong(null, address);
        return NATIVE_LITTLE_ENDIAN ? Long.reverseBytes(raw) : raw;
    }

    /** The CQE's opcode ({@link CqeOpcode}): REQ for a send WQE done, RESP_* for a receive, REQ_ERR/RESP_ERR. */
    public int opcode() {
        return opcode;
    }

    /** The QP the CQE is for. */
    public int qpn() {
        return Cqe64.tailQpn(tail);
    }

    /** The index of the WQE completed (for a requester CQE, what {@link DirectSq}'s write returned for it). */
    public int wqeCounter() {
        return Cqe64.tailWqeCounter(tail);
    }

    /** For a requester CQE, the mlx5 opcode of the send WQE ({@code sop_drop_qpn >> 24}). */
    public int sendOpcode() {
        return Cqe64.tailSendOpcode(tail);
    }

    /** Bytes received, or read by an RDMA READ. */
    public int byteCount() {
        return byteCnt;
    }

    /**
     * The immediate data of a RESP_WR_IMM or RESP_SEND_IMM CQE, or the invalidated rkey of RESP_SEND_INV (0 for a
     * requester CQE).
     */
    public int immediate() {
        return opcode != CqeOpcode.REQ ? immInvalPkey : 0;
    }

    /** A receive CQE's {@code flags_rqpn}: the sender's QPN (UD), its SL and GRH bits; 0 for a requester CQE. */
    public int flagsRqpn() {
        return opcode != CqeOpcode.REQ ? flagsRqpn : 0;
    }

    /** The wr_id of the receive a RESP CQE completed (0 for a requester CQE). */
    public long recvWrId() {
        return opcode != CqeOpcode.REQ ? recvWrId : 0;
    }

    /** The syndrome of an error CQE (0 otherwise); {@link #status} maps it as the verbs do. */
    public int syndrome() {
        return isError() ? syndrome : 0;
    }

    /** The vendor syndrome of an error CQE (0 otherwise). */
    public int vendorSyndrome() {
        return isError() ? vendorSyndrome : 0;
    }

    /** Whether the CQE is an error CQE (REQ_ERR or RESP_ERR). */
    public boolean isError() {
        return opcode == CqeOpcode.REQ_ERR || opcode == CqeOpcode.RESP_ERR;
    }

    /** SUCCESS, or the verbs status of an error CQE's syndrome. */
    public WcStatus status() {
        return isError() ? CqeStatus.toWcStatus(syndrome) : WcStatus.SUCCESS;
    }
}
