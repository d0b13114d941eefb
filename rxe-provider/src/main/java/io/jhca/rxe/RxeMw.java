package io.jhca.rxe;

import io.jhca.rxe.transport.MrTable;
import io.jhca.rxe.transport.Window;
import io.jhca.verbs.MemoryWindow;
import io.jhca.verbs.MwType;

/**
 * A memory window of an rxe device (rxe_mw.c rxe_alloc_mw): its index comes from the memory key table shared with
 * the MRs, so an rkey names one or the other; type 1 starts VALID (bound to nothing), type 2 FREE. Allocation and
 * deallocation reach the engine between two packets.
 */
final class RxeMw extends MemoryWindow {

    private final RxeContext context;
    private final Window window;

    private RxeMw(final RxePd pd, final MwType type, final int key) {
        super(pd, type, key);
        this.context = pd.rxe();
        this.window = new Window(type, pd, key);
    }

    /** {@code chosen}: a key a device model chose (see {@link RxeKeys}), or 0 for the table's next one. */
    static RxeMw allocate(final RxePd pd, final MwType type, final int chosen) {
        final MrTable table = pd.rxe().mrTable();
        final int key = chosen != 0 ? table.reserveChosenKey(chosen) : table.reserveKey();
        final RxeMw mw;
        try {
            mw = new RxeMw(pd, type, key);
        } catch (final RuntimeException e) {
            table.unreserve(key);
            throw e;
        }
        pd.rxe().engine().runOnEngine(() -> table.publishWindow(key, mw.window));
        return mw;
    }

    Window window() {
        return window;
    }

    @Override
    protected void destroy() {
        final MrTable table = context.mrTable();
        context.engine().runOnEngine(() -> {
            window.retire();
            table.removeWindow(window.rkey());
        });
    }
}
