package io.jhca.mlx5;

import org.agrona.DirectBuffer;

import io.jhca.mlx5.ring.SqBuffer;
import io.jhca.mlx5.wqe.MkeyContextSeg;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.MemoryWindow;
import io.jhca.verbs.MwBind;
import io.jhca.verbs.MwType;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.QpType;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.WrOpcode;

/**
 * The send builder of an mlx5 QP (rdma-core's {@code ibv_wr_*} on mlx5): the common WR (one SGE at most, not inline)
 * is written as one WQE at its SGE (or, with none, when it closes), with the call postSend uses for it
 * ({@code SqBuffer.writeOneSge}), and opened again if a second SGE follows ({@code SqBuffer.reopenLast}); any other
 * WR segment by segment as its calls come, straight into the send ring, once. {@link #complete()} rings one doorbell
 * for the batch, {@link #abort()} rolls the producer counter back (the device never saw the WQEs). The classic
 * postSend path opens its other WQEs with {@link #open} too, so both write identical bytes.
 */
final class Mlx5SendQueue extends SendQueue {

    private final SqBuffer sq;
    private final QpType type;
    private final Mlx5Qp qp;

    Mlx5SendQueue(Mlx5Qp qp, SqBuffer sq) {
        super(qp, true);   // the common WR goes into the ring at its first SGE; a second one reopens it (reopenLast)
        this.sq = sq;
        this.type = qp.type();
        this.qp = qp;
    }

    /** Opens a WQE: control segment bookkeeping, then raddr (RC/UC RDMA and atomics) and atomic segments. */
    void open(WrOpcode op, long wrId, int sendFlags, int imm, int rkey, long remoteAddr, long compareAdd, long swap) {
        // SEND_WITH_INV and LOCAL_INV carry the rkey to invalidate in the imm field (qp.c send_ieth), big-endian
        sq.begin(WqeOpcodes.of(op), op.completionOpcode(), wrId, sendFlags, WqeOpcodes.carriesImm(op) ? imm : 0);
        if (type != QpType.UD && op.isRdma()) {
            sq.raddr(remoteAddr, rkey);
        }
        if (op == WrOpcode.ATOMIC_CMP_AND_SWP) {
            sq.atomic(swap, compareAdd);
        } else if (op == WrOpcode.ATOMIC_FETCH_AND_ADD) {
            sq.atomic(compareAdd, 0L);
        }
    }

    /** The UMR segments of a BIND_MW ({@code imm} of the control segment: the window's current rkey). */
    void umrBind(MemoryWindow mw, int rkey, MwBind bind) {
        if (bind.length() > 1L << 31) {
            // qp.c set_bind_wr: a KLM covers at most 2 GiB
            throw new VerbsException(VerbsException.EOPNOTSUPP, "bind MW: length " + bind.length() + " exceeds 2^31");
        }
        sq.immediate(mw.rkey());
        sq.umr(mw.type() == MwType.TYPE_2, rkey, MkeyContextSeg.accessFlagsOf(bind.access()), bind.addr(),
                bind.length(), bind.mr() == null ? 0 : bind.mr().lkey());
    }

    /** The UMR segments of a LOCAL_INV: a type 2 "bind" of length 0 (qp.c), the rkey in imm. */
    void localInv() {
        sq.umr(true, 0, 0, 0, 0, 0);
    }

    @Override
    protected void driverBindMw(MemoryWindow mw, int rkey, MwBind bind) {
        umrBind(mw, rkey, bind);
    }

    @Override
    protected void driverStart() {
        qp.checkSendsByVerbs();
        qp.checkDeviceAlive("post send");   // once a batch, as postSend once a chain: not a pointer chase per WQE
        if (sq != null) {
            sq.startBatch();   // publishes first what a failed postSend chain left pending
        }
    }

    @Override
    protected boolean driverOpenWr(WrOpcode op, long wrId, int sendFlags, int imm, int rkey, long remoteAddr,
                                   long compareAdd, long swap) {
        if (sq == null || sq.full()) {
            return false;
        }
        open(op, wrId, sendFlags, imm, rkey, remoteAddr, compareAdd, swap);
        if (op == WrOpcode.LOCAL_INV) {
            localInv();
        }
        return true;
    }

    /** The common WR: its whole WQE in one call, as postSend writes it ({@link #writePlain}). */
    @Override
    protected boolean driverPlainWr(int opOrdinal, long wrId, int sendFlags, int imm, int rkey, long remoteAddr, int lkey,
                                    long addr, int length, boolean hasSge) {
        SqBuffer q = sq;
        if (q == null || q.full()) {
            return false;
        }
        // the opcode's facts: a constant when the opcode call is inlined
        writeFacts(q, WqeOpcodes.plainOf(opOrdinal), wrId, sendFlags, imm, rkey, remoteAddr, lkey, addr, length);
        return true;
    }

    /**
     * The whole WQE of a plain WR ({@link WrOpcode#isPlain}, RC or UC, at most one SGE, not inline; {@code length} 0:
     * no gather entry) in one call, the opcode by its ordinal, for postSend: the same bytes as the segment path
     * (WqeBytesTest). The caller has checked that the ring has room.
     */
    static void writePlain(SqBuffer q, int opOrdinal, long wrId, int sendFlags, int imm, int rkey, long remoteAddr,
                           int lkey, long addr, int length) {
        writeFacts(q, WqeOpcodes.plainOf(opOrdinal), wrId, sendFlags, imm, rkey, remoteAddr, lkey, addr, length);
    }

    /** {@link #writePlain} with the opcode's facts ({@link WqeOpcodes#plain}) looked up already. */
    private static void writeFacts(SqBuffer q, int p, long wrId, int sendFlags, int imm, int rkey, long remoteAddr,
                                   int lkey, long addr, int length) {
        q.writeOneSge(p & WqeOpcodes.PLAIN_OPCODE_MASK, p >>> WqeOpcodes.PLAIN_WC_SHIFT, wrId, sendFlags,
                (p & WqeOpcodes.PLAIN_IMM) != 0 ? imm : 0, (p & WqeOpcodes.PLAIN_RDMA) != 0, remoteAddr, rkey, lkey, addr,
                length);
    }

    /** The WR {@link #driverPlainWr} just wrote gets another SGE: open its WQE again for {@link #driverSge}. */
    @Override
    protected void driverReopenPlainWr() {
        sq.reopenLast();
    }

    @Override
    protected void driverUdAddr(AddressHandle ah, int remoteQpn, int remoteQkey) {
        sq.datagram(((Mlx5Ah) ah).av(), 0, remoteQpn, remoteQkey);
    }

    @Override
    protected void driverSge(int lkey, long addr, int length) {
        sq.data(lkey, addr, length);
    }

    @Override
    protected void driverInline(DirectBuffer src, int offset, int length) {
        sq.inline(src, offset, length);
    }

    @Override
    protected void driverCloseWr() {
        sq.finish();
    }

    @Override
    protected void driverComplete() {
        sq.ringDoorbell();
    }

    @Override
    protected void driverAbort() {
        if (sq != null) {
            sq.abortBatch();
        }
    }
}
