package io.jhca.rxe.transport;

import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.MwRules;

/**
 * Binding and invalidating memory windows on the engine (rxe_mw.c rxe_bind_mw, rxe_invalidate_mw). Each returns
 * null when done, else why not: the caller turns that into the verbs error (MW_BIND_ERR or LOC_QP_OP_ERR for a
 * local operation, REM_INV_REQ_ERR for a SEND_WITH_INV).
 */
final class WindowOps {

    private WindowOps() {
    }

    /** Executes the BIND_MW WQE {@code w} of {@code qp}. */
    static String bind(final TransportQp qp, final SendWqe w) {
        final Window win = w.window;
        final MemoryAccess mem = qp.engine.memory;
        if (win == null || mem.windowAt(win.rkey) != win) {
            return "window deallocated";
        }
        final MemoryRegion mr = w.bindLength != 0 ? w.bindMr : null;
        if (mr != null && mem.mrByLkey(mr.lkey()) != mr) {
            return "MR deregistered";
        }
        final String error = MwRules.bindError(win.type, win.state, win.qp != null, win.pd, qp.pd, mr, w.bindAddr,
                w.bindLength, w.bindAccess);
        if (error == null) {
            win.bind(qp, w.bindRkey, mr, w.bindAddr, w.bindLength, w.bindAccess);
        }
        return error;
    }

    /** Invalidates {@code rkey} for {@code qp} (LOCAL_INV, or a SEND_WITH_INV it received). */
    static String invalidate(final TransportQp qp, final int rkey) {
        final Window win = qp.engine.memory.windowAt(rkey);
        if (win == null) {
            // rxe_invalidate_mr: only fast-registration MRs can be invalidated, and there are none here
            return "rkey 0x" + Integer.toHexString(rkey) + " names no memory window";
        }
        if (win.rkey != rkey) {
            return "rkey 0x" + Integer.toHexString(rkey) + " is not the window's current key 0x"
                    + Integer.toHexString(win.rkey);
        }
        final String error = MwRules.invalidateError(win.type, win.state);
        if (error == null) {
            win.invalidate();
        }
        return error;
    }
}
