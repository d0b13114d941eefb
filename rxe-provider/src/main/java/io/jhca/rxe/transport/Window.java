package io.jhca.rxe.transport;

import io.jhca.verbs.Access;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.MwRules;
import io.jhca.verbs.MwState;
import io.jhca.verbs.MwType;
import io.jhca.verbs.ProtectionDomain;

/**
 * The device's side of a memory window (rxe_mw.c {@code struct rxe_mw}): its state, current rkey, and what it is
 * bound to. It shares the memory key table's index space with the MRs, so a remote rkey names either. Every field
 * is read and written on the engine only (allocation and deallocation go through {@code runOnEngine}).
 */
public final class Window {
    public final MwType type;
    public final ProtectionDomain pd;
    MwState state;
    int rkey;
    MemoryRegion mr;
    long addr;
    long length;
    int access;
    /** Type 2: the QP whose bind bound it; only that QP's responder accepts it. */
    TransportQp qp;
    public Window(final MwType type, final ProtectionDomain pd, final int rkey) {
        this.type = type;
        this.pd = pd;
        this.rkey = rkey;
        this.state = type == MwType.TYPE_1 ? MwState.VALID : MwState.FREE;
    }

    public int rkey() {
        return rkey;
    }

    public MwState state() {
        return state;
    }

    /** rxe_do_bind_mw: the new key byte, the span and rights; type 2 remembers its QP. */
    void bind(final TransportQp by, final int newRkey, final MemoryRegion to, final long addr, final long length,
            final int access) {
        rkey = (rkey & 0xFFFFFF00) | (newRkey & 0xFF);
        this.access = access;
        this.addr = addr;
        this.length = length;
        state = MwState.VALID;
        release();
        if (length != 0) {
            mr = to;
            to.windowBound();
        }
        if (type == MwType.TYPE_2) {
            qp = by;
        }
    }

    /** rxe_do_invalidate_mw: back to FREE, bound to nothing. */
    void invalidate() {
        release();
        qp = null;
        access = 0;
        addr = 0;
        length = 0;
        state = MwState.FREE;
    }

    /** Deallocated: nothing reaches it any more. */
    public void retire() {
        release();
        qp = null;
        length = 0;
        state = MwState.INVALID;
    }

    private void release() {
        if (mr != null) {
            final MemoryRegion old = mr;
            mr = null;
            old.windowUnbound();
        }
    }

    /**
     * The MR a remote access by {@code responder} may use through this window, or null (rxe_lookup_mw, and the
     * IBTA's bounds: the span must lie inside the window, not merely inside its MR).
     */
    MemoryRegion check(final TransportQp responder, final int key, final long va, final long len, final int accessBit) {
        if (key != rkey || state != MwState.VALID || length == 0 || responder.pd != pd
                || (type == MwType.TYPE_2 && qp != responder)
                || (MwRules.remoteAccess(access) & accessBit) == 0
                || !MemoryRegion.spanContains(addr, length, va, len)) {
            return null;
        }
        return mr;
    }

    @Override
    public String toString() {
        return "window " + type + " rkey=0x" + Integer.toHexString(rkey) + " " + state + " [0x" + Long.toHexString(addr)
                + ", +" + length + ") " + Access.describe(access);
    }
}
