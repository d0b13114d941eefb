package io.jhca.mlx5;

import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.cmd.MkeyLayouts;
import io.jhca.mlx5.init.PrmCommand;
import io.jhca.verbs.MemoryWindow;
import io.jhca.verbs.MwType;

/**
 * A memory window: a free KLM-mode mkey with UMR enabled (CREATE_MKEY as the kernel's mlx5_ib_alloc_mw builds it,
 * {@link MkeyLayouts#setMwMkey}), rkey = {@code mkey_index << 8 | tag}. Binds and invalidations are UMR WQEs on a
 * QP (see {@code SqBuffer.umr}); the device keeps the window's state.
 */
final class Mlx5Mw extends MemoryWindow {

    private final Mlx5Context ctx;

    private Mlx5Mw(Mlx5Pd pd, MwType type, int key) {
        super(pd, type, key);
        this.ctx = pd.mlx5Context();
    }

    static Mlx5Mw allocate(Mlx5Pd pd, MwType type) {
        Mlx5Context ctx = pd.mlx5Context();
        int tag = ctx.nextMkeyTag();
        int key;
        try {
            PrmCommand c = PrmCommand.of(CmdOpcode.CREATE_MKEY, MkeyLayouts.CREATE_MKEY_IN, MkeyLayouts.CREATE_MKEY_OUT);
            MkeyLayouts.setMwMkey(c.input(), pd.pdn(), type == MwType.TYPE_2, tag);
            key = (int) c.execute(ctx.hca().cmdq()).get("mkey_index") << 8 | tag;
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("allocate MW on " + ctx.name(), e);
        }
        try {
            return new Mlx5Mw(pd, type, key);
        } catch (RuntimeException e) {
            destroyMkey(ctx, key);
            throw e;
        }
    }

    private static void destroyMkey(Mlx5Context ctx, int key) {
        PrmCommand.of(CmdOpcode.DESTROY_MKEY, MkeyLayouts.DESTROY_MKEY_IN, MkeyLayouts.DESTROY_MKEY_OUT)
                .set("mkey_index", key >>> 8).execute(ctx.hca().cmdq());
    }

    @Override
    protected void destroy() {
        try {
            destroyMkey(ctx, rkey());
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("deallocate " + describe() + " on " + ctx.name(), e);
        }
    }
}
