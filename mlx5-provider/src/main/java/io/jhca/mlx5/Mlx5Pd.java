package io.jhca.mlx5;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;

/** A protection domain: a PD number from ALLOC_PD, put into every mkey and QP context of the domain. */
final class Mlx5Pd extends ProtectionDomain {

    private final Mlx5Context ctx;
    private final int pdn;

    private Mlx5Pd(Mlx5Context ctx, int pdn) {
        super(ctx);
        this.ctx = ctx;
        this.pdn = pdn;
    }

    static Mlx5Pd allocate(Mlx5Context ctx) {
        int pdn;
        try {
            pdn = ctx.hca().commands().allocPd();
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("allocate PD on " + ctx.name(), e);
        }
        try {
            return new Mlx5Pd(ctx, pdn);
        } catch (RuntimeException e) {
            ctx.hca().commands().deallocPd(pdn);
            throw e;
        }
    }

    Mlx5Context mlx5Context() {
        return ctx;
    }

    int pdn() {
        return pdn;
    }

    @Override
    public String describe() {
        return "PD " + pdn;
    }

    @Override
    protected MemoryRegion driverRegister(DmaRegion region, long offset, long length, int accessMask) {
        return Mlx5Mr.register(this, region, offset, length, accessMask);
    }

    @Override
    protected io.jhca.verbs.MemoryWindow driverAllocMw(io.jhca.verbs.MwType type) {
        return Mlx5Mw.allocate(this, type);
    }

    @Override
    protected QueuePair driverCreateQp(QpInitAttributes init, QpCapabilities requested) {
        return Mlx5Qp.create(this, init, requested);
    }

    @Override
    protected io.jhca.verbs.SharedReceiveQueue driverCreateSrq(io.jhca.verbs.SrqInitAttributes init) {
        return Mlx5Srq.create(this, init);
    }

    @Override
    protected AddressHandle driverCreateAh(AhAttributes attributes) {
        return new Mlx5Ah(this, attributes);
    }

    @Override
    protected void destroy() {
        try {
            ctx.hca().commands().deallocPd(pdn);
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("deallocate " + describe() + " on " + ctx.name(), e);
        }
    }
}
