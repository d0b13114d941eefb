package io.jhca.verbs;

/**
 * The rules of memory window binding and invalidation, once for every provider. What is known when the work request
 * is posted is refused then ({@link #checkPost}: EINVAL or EPERM, nothing posted): the MR's rights and span
 * (IBTA C10-73..75), which rdma-core's mlx5 provider checks in {@code set_bind_wr} because a ConnectX does not (its
 * mkey context has no bind right), so every provider refuses them alike. What only the device knows, the window's
 * state, is found when it executes the bind ({@link #bindError}: the WR completes with {@link WcStatus#MW_BIND_ERR}
 * and the QP goes to ERR, as Linux rxe's {@code rxe_check_bind_mw} has it; the software device checks the MR rules
 * there again).
 */
public final class MwRules {
    /** The access bits a window may grant (remote rights; local bits are allowed and mean nothing remotely). */
    private static final int REMOTE = Access.REMOTE_WRITE.bit() | Access.REMOTE_READ.bit() | Access.REMOTE_ATOMIC.bit();

    private MwRules() {
    }

    /**
     * Post-time checks of a bind ({@code ibv_bind_mw} for type 1, a BIND_MW WR for type 2): the device offers the
     * window type, the window and the MR are open, the access bits are known, an unbind names no span, and the MR
     * is of the window's PD (rdma-core's mlx5 provider: EPERM).
     */
    public static void checkPost(QueuePair qp, MemoryWindow mw, MwBind bind, MwType expected) {
        String what = (expected == MwType.TYPE_1 ? "bind MW" : "post send BIND_MW") + " on " + qp.describe() + ": ";
        if (mw == null) {
            throw new VerbsException(VerbsException.EINVAL, what + "no memory window");
        }
        if (mw.isClosed()) {
            throw new VerbsException(VerbsException.EINVAL, what + mw.describe() + " is deallocated");
        }
        if (mw.type() != expected) {
            throw new VerbsException(VerbsException.EINVAL, what + mw.describe() + " is not a "
                    + (expected == MwType.TYPE_1 ? "type 1 window (type 2 is bound by a BIND_MW WR)"
                    : "type 2 window (type 1 is bound by bindMw)"));
        }
        if (mw.pd().context() != qp.pd().context()) {
            throw new VerbsException(VerbsException.EINVAL, what + mw.describe() + " belongs to another device");
        }
        if ((bind.access() & ~Access.ALL) != 0) {
            throw new VerbsException(VerbsException.EINVAL, what + "unknown access bits 0x"
                    + Integer.toHexString(bind.access() & ~Access.ALL) + " (zero-based windows are not supported)");
        }
        MemoryRegion mr = bind.mr();
        if (mr == null) {
            if (bind.addr() != 0 || bind.length() != 0) {
                // rdma-core ibv_bind_mw providers: no MR with an address or a length is EINVAL
                throw new VerbsException(VerbsException.EINVAL, what + "no MR, yet address 0x"
                        + Long.toHexString(bind.addr()) + " length " + bind.length());
            }
            return;
        }
        if (mr.isClosed()) {
            throw new VerbsException(VerbsException.EINVAL, what + mr.describe() + " is deregistered");
        }
        if (mr.pd() != mw.pd()) {
            throw new VerbsException(VerbsException.EPERM, what + mr.describe() + " and " + mw.describe()
                    + " are of different PDs");
        }
        if (bind.length() < 0) {
            throw new VerbsException(VerbsException.EINVAL, what + "negative length " + bind.length());
        }
        String mrError = mrError(mr, bind.addr(), bind.length(), bind.access());
        if (mrError != null) {
            throw new VerbsException(VerbsException.EINVAL, what + mr.describe() + ": " + mrError);
        }
    }

    /** The MR rules of a bind (C10-73..75); null if they hold. */
    private static String mrError(MemoryRegion mr, long addr, long length, int access) {
        if (!Access.has(mr.access(), Access.MW_BIND)) {
            return "MR without MW_BIND access (C10-73)";
        }
        if ((access & (Access.REMOTE_WRITE.bit() | Access.REMOTE_ATOMIC.bit())) != 0
                && !Access.has(mr.access(), Access.LOCAL_WRITE)) {
            return "remote write or atomic window on an MR without local write (C10-74)";
        }
        if (!mr.contains(addr, length)) {
            return "window [0x" + Long.toHexString(addr) + ", +" + length + ") outside the MR (C10-75)";
        }
        return null;
    }

    /**
     * Execution-time checks of a bind against the window's state, in rxe's order (rxe_mw.c rxe_check_bind_mw);
     * null if the bind may proceed, else why it fails with {@link WcStatus#MW_BIND_ERR}.
     *
     * @param state the window's state now
     * @param boundQp for type 2: whether the window is still bound to a QP
     */
    public static String bindError(MwType type, MwState state, boolean boundQp, ProtectionDomain mwPd,
            ProtectionDomain qpPd, MemoryRegion mr, long addr, long length, int access) {
        if (type == MwType.TYPE_1) {
            if (state != MwState.VALID) {
                return "type 1 window not in the valid state";
            }
        } else {
            if (state != MwState.FREE || boundQp) {
                return "type 2 window not in the free state (o10-37.2.30)";
            }
            if (qpPd != mwPd) {
                return "type 2 window of another PD than the QP (C10-72)";
            }
            if (mr == null || length == 0) {
                return "type 2 window bound to no MR or zero length (o10-37.2.40)";
            }
        }
        return mr == null ? null : mrError(mr, addr, length, access);
    }

    /** The remote rights a window grants (its other access bits grant nothing). */
    public static int remoteAccess(int access) {
        return access & REMOTE;
    }

    /**
     * Execution-time check of an invalidation (LOCAL_INV, or a received SEND_WITH_INV) of a window (rxe_mw.c
     * rxe_check_invalidate_mw): null if it may proceed, else why not.
     */
    public static String invalidateError(MwType type, MwState state) {
        if (state == MwState.INVALID) {
            return "window deallocated";
        }
        if (type == MwType.TYPE_1) {
            return "a type 1 window cannot be invalidated by an rkey (o10-37.2.26)";
        }
        if (state == MwState.FREE) {
            return "type 2 window is not bound";
        }
        return null;
    }
}
