package io.jhca.rxe.transport;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * One send-queue slot, preallocated and reused. The posting thread writes the WR fields (SGE descriptors are
 * copied, not the data; inline data is copied into {@link #inlineData}) before publishing the slot; from then
 * on only the engine touches it, and it fills in the transport bookkeeping below.
 */
public final class SendWqe {
    // ---- written at post time
    public long wrId;
    public WrOpcode opcode;
    public int flags;
    public int imm;
    public int rkey;
    public long remoteAddr;
    public long compareAdd;
    public long swap;
    public int numSge;
    public final long[] sgeAddr;
    public final int[] sgeLength;
    public final int[] sgeLkey;
    public boolean inline;
    /** Inline bytes (null when the QP has no inline room). */
    public final UnsafeBuffer inlineData;
    public int inlineLength;
    /** Total message length in bytes (sum of the SGEs, or the inline length). */
    public long length;
    /** UD destination. */
    public Peer udPeer;
    public int remoteQpn;
    public int remoteQkey;
    /** LOCAL_INV, SEND_WITH_INV: the rkey to invalidate. */
    public int invalidateRkey;
    /** BIND_MW: the window, its new rkey and what it binds to. */
    public Window window;
    public int bindRkey;
    public io.jhca.verbs.MemoryRegion bindMr;
    public long bindAddr;
    public long bindLength;
    public int bindAccess;

    // ---- engine bookkeeping
    /** PSNs assigned: firstPsn..lastPsn are this WQE's (requests, or the responses of a READ). */
    boolean assigned;
    int firstPsn;
    int lastPsn;
    /** Counted against max_rd_atomic. */
    boolean rdAtomicCounted;
    /** Non-null: the WQE failed locally and completes with this status when it reaches the head. */
    WcStatus error;

    SendWqe(final int maxSge, final int maxInline) {
        sgeAddr = new long[maxSge];
        sgeLength = new int[maxSge];
        sgeLkey = new int[maxSge];
        inlineData = maxInline > 0 ? new UnsafeBuffer(new byte[maxInline]) : null;
    }

    /** Starts a fresh WR in this slot (posting thread). */
    public void open(final long wrId, final WrOpcode opcode, final int flags, final int imm, final int rkey,
            final long remoteAddr, final long compareAdd, final long swap) {
        this.wrId = wrId;
        this.opcode = opcode;
        this.flags = flags;
        this.imm = imm;
        this.rkey = rkey;
        this.remoteAddr = remoteAddr;
        this.compareAdd = compareAdd;
        this.swap = swap;
        this.numSge = 0;
        this.inline = false;
        this.inlineLength = 0;
        this.length = 0;
        this.remoteQpn = 0;
        this.remoteQkey = 0;
        this.invalidateRkey = 0;
        this.assigned = false;
        this.rdAtomicCounted = false;
        // a reference store costs G1 barriers on every post: clear only what an earlier WR of this slot set
        if (udPeer != null) {
            udPeer = null;
        }
        if (window != null || bindMr != null) {
            window = null;
            bindMr = null;
        }
        if (error != null) {
            error = null;
        }
    }

    /** Appends an SGE descriptor (bounds were checked by the caller against max_send_sge). */
    public void addSge(final long addr, final int length, final int lkey) {
        final int i = numSge++;
        sgeAddr[i] = addr;
        sgeLength[i] = length;
        sgeLkey[i] = lkey;
        this.length += length & 0xFFFFFFFFL;
    }

    public int maxSge() {
        return sgeAddr.length;
    }

    public int maxInline() {
        return inlineData == null ? 0 : inlineData.capacity();
    }

    boolean isReadOrAtomic() {
        return opcode == WrOpcode.RDMA_READ || opcode.isAtomic();
    }
}
