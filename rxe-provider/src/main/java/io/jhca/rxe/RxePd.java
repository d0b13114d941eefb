package io.jhca.rxe;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;

/** A protection domain of an rxe device: the engine compares PD identities before any memory access. */
final class RxePd extends ProtectionDomain {

    private final RxeContext context;

    RxePd(final RxeContext context) {
        super(context);
        this.context = context;
    }

    RxeContext rxe() {
        return context;
    }

    /** A key chosen through {@link RxeKeys} for the registration in progress, or 0. Guarded by this PD. */
    private int chosenKey;

    /** Registers through the shared checks of {@link ProtectionDomain#register} under a chosen key. */
    synchronized MemoryRegion registerWithKey(final DmaRegion region, final long offset, final long length,
            final int accessMask, final int key) {
        chosenKey = key;
        try {
            return register(region, offset, length, accessMask);
        } finally {
            chosenKey = 0;
        }
    }

    @Override
    protected MemoryRegion driverRegister(final DmaRegion region, final long offset, final long length, final int accessMask) {
        final int key;
        synchronized (this) {
            key = chosenKey;
        }
        return key != 0 ? RxeMr.registerWithKey(this, region, offset, length, accessMask, key)
                : RxeMr.register(this, region, offset, length, accessMask);
    }

    /** Allocates through the shared checks of {@link ProtectionDomain#allocMw} under a chosen key. */
    synchronized io.jhca.verbs.MemoryWindow allocMwWithKey(final io.jhca.verbs.MwType type, final int key) {
        chosenKey = key;
        try {
            return allocMw(type);
        } finally {
            chosenKey = 0;
        }
    }

    @Override
    protected io.jhca.verbs.MemoryWindow driverAllocMw(final io.jhca.verbs.MwType type) {
        final int key;
        synchronized (this) {
            key = chosenKey;
        }
        return RxeMw.allocate(this, type, key);
    }

    @Override
    protected QueuePair driverCreateQp(final QpInitAttributes init, final QpCapabilities requested) {
        // QP1 is claimed before the QP exists, so a refused claim leaves nothing registered with the PD or CQs
        final int qpn = init.isGsi() ? context.claimGsiQpn() : 0;
        try {
            return new RxeQp(this, init, requested, qpn);
        } catch (RuntimeException e) {
            if (qpn == 1) {
                context.releaseGsiQpn();
            }
            throw e;
        }
    }

    @Override
    protected io.jhca.verbs.SharedReceiveQueue driverCreateSrq(final io.jhca.verbs.SrqInitAttributes init) {
        return new RxeSrq(this, init);
    }

    @Override
    protected AddressHandle driverCreateAh(final AhAttributes attributes) {
        return new RxeAh(this, attributes);
    }

    @Override
    protected void destroy() {
        // nothing of its own: MRs, QPs and AHs (which refuse to outlive it) hold the resources
    }
}
