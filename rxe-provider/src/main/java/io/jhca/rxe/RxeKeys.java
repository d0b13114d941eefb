package io.jhca.rxe;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.VerbsException;

/**
 * For embedding the rxe transport in a device model: register memory under a key the model chose. A simulated
 * ConnectX hands its driver mkeys (index &lt;&lt; 8 | the driver's tag byte) and peers put them in RETHs, so the
 * rxe device that carries the model's traffic must know the memory by the same key. Ordinary applications use
 * {@link ProtectionDomain#register}, which picks keys itself.
 */
public final class RxeKeys {
    private RxeKeys() {
    }

    /**
     * Registers {@code [offset, offset + length)} of a region on an rxe PD with lkey = {@code key} (and rkey =
     * {@code key} when remote access is granted), after the same checks as {@link ProtectionDomain#register}.
     *
     * @throws VerbsException if {@code pd} is not an rxe PD
     * @throws IllegalStateException if the key's index is in use
     */
    public static MemoryRegion register(final ProtectionDomain pd, final DmaRegion region, final long offset,
            final long length, final int accessMask, final int key) {
        if (!(pd instanceof RxePd)) {
            throw new VerbsException(VerbsException.EINVAL, "RxeKeys.register needs a PD of an rxe device");
        }
        return ((RxePd) pd).registerWithKey(region, offset, length, accessMask, key);
    }

    /**
     * Allocates a memory window on an rxe PD whose rkey is {@code key} (a device model's MW mkey), after the same
     * checks as {@link ProtectionDomain#allocMw}.
     *
     * @throws VerbsException if {@code pd} is not an rxe PD
     * @throws IllegalStateException if the key's index is in use
     */
    public static io.jhca.verbs.MemoryWindow allocMw(final ProtectionDomain pd, final io.jhca.verbs.MwType type,
            final int key) {
        if (!(pd instanceof RxePd)) {
            throw new VerbsException(VerbsException.EINVAL, "RxeKeys.allocMw needs a PD of an rxe device");
        }
        return ((RxePd) pd).allocMwWithKey(type, key);
    }
}
