package io.jhca.rxe;

import io.jhca.memory.DmaRegion;
import io.jhca.rxe.transport.MrTable;
import io.jhca.verbs.Access;
import io.jhca.verbs.MemoryRegion;

/**
 * A memory registration of an rxe device. Keys come from the device's {@link MrTable} (24-bit index, 8-bit tag);
 * the rkey is the lkey when remote access was granted and 0 otherwise, as in rxe. Deregistration removes the key
 * on the engine thread, between two packets, so no copy can still be running into the memory when the region is
 * released.
 */
final class RxeMr extends MemoryRegion {

    private static final int REMOTE = Access.REMOTE_WRITE.bit() | Access.REMOTE_READ.bit() | Access.REMOTE_ATOMIC.bit();

    private final RxeContext context;

    private RxeMr(final RxePd pd, final DmaRegion region, final long offset, final long length, final int access,
            final int key) {
        super(pd, region, offset, length, access, key, (access & REMOTE) != 0 ? key : 0);
        this.context = pd.rxe();
    }

    static RxeMr register(final RxePd pd, final DmaRegion region, final long offset, final long length, final int access) {
        final MrTable table = pd.rxe().mrTable();
        final int key = table.reserveKey();
        final RxeMr mr;
        try {
            mr = new RxeMr(pd, region, offset, length, access, key);
        } catch (final RuntimeException e) {
            table.unreserve(key);
            throw e;
        }
        table.publish(key, mr);
        return mr;
    }

    /** As {@link #register}, under a key the caller chose (see {@link RxeKeys}). */
    static RxeMr registerWithKey(final RxePd pd, final DmaRegion region, final long offset, final long length,
            final int access, final int key) {
        final MrTable table = pd.rxe().mrTable();
        table.reserveChosenKey(key);
        final RxeMr mr;
        try {
            mr = new RxeMr(pd, region, offset, length, access, key);
        } catch (final RuntimeException e) {
            table.unreserve(key);
            throw e;
        }
        table.publish(key, mr);
        return mr;
    }

    @Override
    protected void deregister() {
        final MrTable table = context.mrTable();
        final int key = lkey();
        context.engine().runOnEngine(() -> table.remove(key));
    }
}
