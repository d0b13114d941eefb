package io.jhca.verbs;

import org.agrona.DirectBuffer;

/**
 * The in-place send builder, in the style of rdma-core's {@code ibv_wr_*} API ("QPEx"):
 *
 * <pre>
 * sq.start();
 * sq.wrId(1).flags(SendFlags.SIGNALED).rdmaWrite(rkey, raddr).sge(mr, 0, 64);
 * sq.wrId(2).flags(0).send().sge(mr, 64, 8);
 * int err = sq.complete();      // one doorbell for the batch; 0 or ENOMEM (queue full: nothing posted)
 * </pre>
 *
 * Each opcode call opens a work request; the SGE, inline and UD address calls that follow complete it; the
 * next opcode call or {@link #complete()} closes it. {@code wrId} and {@code flags} persist until changed,
 * as the fields of {@code struct ibv_qp_ex} do. A misuse (wrong opcode for the QP type, too many SGEs, too much
 * inline data, an atomic without one 8-byte SGE, a UD WR without an address) throws {@link VerbsException} at
 * once and drops the batch; a full queue is the return value of {@link #complete()}. The provider writes the
 * WQE straight into its ring: nothing is allocated and nothing is copied twice.
 */
public abstract class SendQueue {
    private final QueuePair qp;
    private long wrId;
    private int flags;
    private boolean started;
    private boolean full;
    private WrOpcode open;
    private int sges;
    private long bytes;
    private boolean inline;
    private boolean udAddressed;

    protected SendQueue(QueuePair qp) {
        this.qp = qp;
    }

    public final QueuePair qp() {
        return qp;
    }

    /** Begins a batch ({@code ibv_wr_start}). */
    public final SendQueue start() {
        qp.checkOpen();
        qp.checkCanPostSend();
        if (started) {
            throw new VerbsException(VerbsException.EINVAL, "send builder of " + qp.describe() + ": start() twice without complete() or abort()");
        }
        started = true;
        full = false;
        open = null;
        driverStart();
        return this;
    }

    public final SendQueue wrId(long id) {
        wrId = id;
        return this;
    }

    /** {@link SendFlags} bits for the WRs that follow. */
    public final SendQueue flags(int sendFlags) {
        if ((sendFlags & ~SendFlags.ALL) != 0) {
            throw fail("unknown send flags 0x" + Integer.toHexString(sendFlags));
        }
        flags = sendFlags;
        return this;
    }

    public final SendQueue send() {
        return openWr(WrOpcode.SEND, 0, 0, 0, 0, 0);
    }

    public final SendQueue sendImm(int imm) {
        return openWr(WrOpcode.SEND_WITH_IMM, imm, 0, 0, 0, 0);
    }

    public final SendQueue rdmaWrite(int rkey, long remoteAddr) {
        return openWr(WrOpcode.RDMA_WRITE, 0, rkey, remoteAddr, 0, 0);
    }

    public final SendQueue rdmaWriteImm(int rkey, long remoteAddr, int imm) {
        return openWr(WrOpcode.RDMA_WRITE_WITH_IMM, imm, rkey, remoteAddr, 0, 0);
    }

    public final SendQueue rdmaRead(int rkey, long remoteAddr) {
        return openWr(WrOpcode.RDMA_READ, 0, rkey, remoteAddr, 0, 0);
    }

    public final SendQueue atomicCmpSwp(int rkey, long remoteAddr, long compare, long swap) {
        return openWr(WrOpcode.ATOMIC_CMP_AND_SWP, 0, rkey, remoteAddr, compare, swap);
    }

    public final SendQueue atomicFetchAdd(int rkey, long remoteAddr, long add) {
        return openWr(WrOpcode.ATOMIC_FETCH_AND_ADD, 0, rkey, remoteAddr, add, 0);
    }

    /** UD destination of the open WR ({@code ibv_wr_set_ud_addr}). */
    public final SendQueue udAddr(AddressHandle ah, int remoteQpn, int remoteQkey) {
        requireOpen("udAddr");
        if (qp.type() != QpType.UD) {
            throw fail("udAddr on a " + qp.type() + " QP");
        }
        if (ah == null || ah.isClosed() || ah.pd() != qp.pd()) {
            throw fail("UD address handle missing, closed or of another PD");
        }
        udAddressed = true;
        if (!full) {
            driverUdAddr(ah, remoteQpn, remoteQkey);
        }
        return this;
    }

    /** One gather element of the open WR ({@code ibv_wr_set_sge}; call again for a list). */
    public final SendQueue sge(int lkey, long addr, int length) {
        requireOpen("sge");
        if (inline) {
            throw fail("sge after inline data in one WR");
        }
        if (++sges > qp.capabilities().maxSendSge()) {
            throw fail(sges + " SGEs exceed max_send_sge " + qp.capabilities().maxSendSge());
        }
        bytes += length & 0xFFFFFFFFL;
        if (open.isAtomic() && (sges > 1 || length != 8)) {
            throw fail(open + " needs exactly one 8-byte SGE");
        }
        if (!full) {
            driverSge(lkey, addr, length);
        }
        return this;
    }

    public final SendQueue sge(MemoryRegion mr, long offset, int length) {
        return sge(mr.lkey(), mr.address() + offset, length);
    }

    /** Inline data for the open WR ({@code ibv_wr_set_inline_data}): copied into the WQE now. */
    public final SendQueue inlineData(DirectBuffer src, int offset, int length) {
        requireOpen("inlineData");
        if (open == WrOpcode.RDMA_READ || open.isAtomic()) {
            throw fail("inline data with " + open);
        }
        if (sges > 0) {
            throw fail("inline data after SGEs in one WR");
        }
        inline = true;
        bytes += length;
        if (bytes > qp.capabilities().maxInlineData()) {
            throw fail("inline data of " + bytes + " bytes exceeds max_inline_data " + qp.capabilities().maxInlineData());
        }
        if (!full) {
            driverInline(src, offset, length);
        }
        return this;
    }

    /**
     * Ends the batch ({@code ibv_wr_complete}): rings the doorbell once for all its WRs. Returns 0, or ENOMEM if
     * the send queue filled up, in which case no WR of the batch was posted.
     */
    public final int complete() {
        if (!started) {
            throw new VerbsException(VerbsException.EINVAL, "send builder of " + qp.describe() + ": complete() without start()");
        }
        closeWr();
        started = false;
        if (full) {
            driverAbort();
            return VerbsException.ENOMEM;
        }
        driverComplete();
        return 0;
    }

    /** Drops every WR since {@link #start()} ({@code ibv_wr_abort}). */
    public final void abort() {
        if (started) {
            started = false;
            open = null;
            driverAbort();
        }
    }

    private SendQueue openWr(WrOpcode op, int imm, int rkey, long raddr, long compareAdd, long swap) {
        if (!started) {
            throw new VerbsException(VerbsException.EINVAL, "send builder of " + qp.describe() + ": " + op + " before start()");
        }
        closeWr();
        QpType t = qp.type();
        if ((t == QpType.UD && op != WrOpcode.SEND && op != WrOpcode.SEND_WITH_IMM)
                || (t == QpType.UC && (op == WrOpcode.RDMA_READ || op.isAtomic()))) {
            throw fail("opcode " + op + " is not supported on " + t);
        }
        if (op.isAtomic() && (raddr & 7) != 0) {
            throw fail(op + " remote address 0x" + Long.toHexString(raddr) + " is not 8-byte aligned");
        }
        open = op;
        sges = 0;
        bytes = 0;
        inline = false;
        udAddressed = false;
        if (!full && !driverOpenWr(op, wrId, flags, imm, rkey, raddr, compareAdd, swap)) {
            full = true;
        }
        return this;
    }

    private void closeWr() {
        if (open == null) {
            return;
        }
        if (qp.type() == QpType.UD && !udAddressed) {
            throw fail("UD " + open + " without udAddr()");
        }
        if (open.isAtomic() && sges != 1) {
            throw fail(open + " needs exactly one 8-byte SGE");
        }
        if (!full) {
            driverCloseWr();
        }
        open = null;
    }

    private void requireOpen(String call) {
        if (open == null) {
            throw fail(call + "() without an opcode call before it");
        }
    }

    private VerbsException fail(String why) {
        boolean wasStarted = started;
        started = false;
        open = null;
        if (wasStarted) {
            driverAbort();
        }
        return new VerbsException(VerbsException.EINVAL, "send builder of " + qp.describe() + ": " + why + " (batch dropped)");
    }

    /** Provider side: a batch begins (remember the producer index to roll back to). */
    protected abstract void driverStart();

    /** Provider side: open a WQE for {@code op}; false if the ring has no room (the batch will be dropped). */
    protected abstract boolean driverOpenWr(WrOpcode op, long wrId, int sendFlags, int imm, int rkey, long remoteAddr,
                                            long compareAdd, long swap);

    protected abstract void driverUdAddr(AddressHandle ah, int remoteQpn, int remoteQkey);

    protected abstract void driverSge(int lkey, long addr, int length);

    protected abstract void driverInline(DirectBuffer src, int offset, int length);

    /** Provider side: the open WQE is complete (write its size, advance the producer index). */
    protected abstract void driverCloseWr();

    /** Provider side: make the batch visible to the device with one doorbell. */
    protected abstract void driverComplete();

    /** Provider side: forget every WQE since {@link #driverStart()}. */
    protected abstract void driverAbort();
}
