package io.jhca.mlx5;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.MkeyLayouts;
import io.jhca.mlx5.cmd.CmdOpcode;
import io.jhca.mlx5.init.PrmCommand;
import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.verbs.Access;
import io.jhca.verbs.MemoryRegion;

/**
 * A memory registration: an MTT-mode mkey (CREATE_MKEY, as rdma-core's mlx5_vfio.c {@code mlx5_vfio_reg_mr} builds
 * it) whose translation table lists the IOVA of every 4 KiB page of the span, each entry {@code iova | READ | WRITE}.
 * The key's start address is the span's virtual address, what work requests and peers name; lkey = rkey =
 * {@code mkey_index << 8 | mkey_7_0}, mkey_7_0 a rolling 8-bit tag. Access bits: a (remote atomic), rw, rr, lw from
 * the verbs access mask, lr always (mkc fields as rdma-core sets them). The region is mapped for the device first
 * ({@code Mlx5Function.mapForDevice}) and unmapped after DESTROY_MKEY.
 */
final class Mlx5Mr extends MemoryRegion {

    /** MTT page: 4 KiB (mkc.log_page_size is the full page shift). */
    static final int PAGE_SHIFT = 12;
    static final long PAGE = 1L << PAGE_SHIFT;

    private final Mlx5Context ctx;

    private Mlx5Mr(Mlx5Pd pd, DmaRegion region, long offset, long length, int access, int key) {
        super(pd, region, offset, length, access, key, key);
        this.ctx = pd.mlx5Context();
    }

    static Mlx5Mr register(Mlx5Pd pd, DmaRegion region, long offset, long length, int access) {
        Mlx5Context ctx = pd.mlx5Context();
        ctx.mapForDevice(region);
        int key;
        try {
            key = createMkey(pd, region, offset, length, access);
        } catch (RuntimeException e) {
            ctx.unmapForDevice(region);
            throw Mlx5Errors.of("register MR on " + ctx.name(), e);
        }
        Mlx5Mr mr;
        try {
            mr = new Mlx5Mr(pd, region, offset, length, access, key);
        } catch (RuntimeException e) {
            destroyMkey(ctx, key);
            ctx.unmapForDevice(region);
            throw e;
        }
        ctx.mrs().put(key, mr);
        return mr;
    }

    /** Number of MTT entries: the 4 KiB pages touched by [va, va + length). */
    static int pages(long va, long length) {
        if (length == 0) {
            return 0;
        }
        long first = va & -PAGE;
        long last = (va + length - 1) & -PAGE;
        long n = ((last - first) >>> PAGE_SHIFT) + 1;
        if (n > Integer.MAX_VALUE / 8) {
            throw new IllegalArgumentException("MR of " + length + " bytes needs too many translation entries");
        }
        return (int) n;
    }

    private static int createMkey(Mlx5Pd pd, DmaRegion region, long offset, long length, int access) {
        Mlx5Context ctx = pd.mlx5Context();
        long va = region.address() + offset;
        int n = pages(va, length);
        int octwords = MkeyLayouts.octwords(n);
        int tag = ctx.nextMkeyTag();
        String m = "memory_key_mkey_entry.";
        PrmCommand c = PrmCommand.of(CmdOpcode.CREATE_MKEY, MkeyLayouts.CREATE_MKEY_IN, MkeyLayouts.createMkeyInLength(n),
                        MkeyLayouts.CREATE_MKEY_OUT, MkeyLayouts.CREATE_MKEY_OUT.sizeBytes())
                .set("pg_access", 1)
                .set(m + "free", 0)
                .set(m + "a", Access.has(access, Access.REMOTE_ATOMIC))
                .set(m + "rw", Access.has(access, Access.REMOTE_WRITE))
                .set(m + "rr", Access.has(access, Access.REMOTE_READ))
                .set(m + "lw", Access.has(access, Access.LOCAL_WRITE))
                .set(m + "lr", 1)
                .set(m + "access_mode_1_0", MkeyLayouts.ACCESS_MODE_MTT)
                .set(m + "qpn", 0xffffff)
                .set(m + "mkey_7_0", tag)
                .set(m + "pd", pd.pdn())
                .set(m + "start_addr", va)
                .set(m + "len", length)
                .set(m + "translations_octword_size", octwords)
                .set(m + "log_page_size", PAGE_SHIFT)
                .set("translations_octword_actual_size", octwords);
        long firstPageVa = va & -PAGE;
        Mlx5Function fn = ctx.function();
        for (int i = 0; i < n; i++) {
            // entry 0: the page holding the first byte (a region or slice may start inside a page)
            long iova = i == 0 ? fn.deviceAddress(region, offset) & -PAGE
                    : fn.deviceAddress(region, firstPageVa + i * PAGE - region.address());
            c.setElement("klm_pas_mtt", i, MkeyLayouts.mttEntry(iova, MkeyLayouts.MTT_PERM_RW));
        }
        int index = (int) c.execute(ctx.hca().cmdq()).get("mkey_index");
        return index << 8 | tag;
    }

    private static void destroyMkey(Mlx5Context ctx, int key) {
        PrmCommand.of(CmdOpcode.DESTROY_MKEY, MkeyLayouts.DESTROY_MKEY_IN, MkeyLayouts.DESTROY_MKEY_OUT)
                .set("mkey_index", key >>> 8).execute(ctx.hca().cmdq());
    }

    @Override
    protected void deregister() {
        ctx.mrs().remove(lkey());
        try {
            destroyMkey(ctx, lkey());
        } catch (RuntimeException e) {
            throw Mlx5Errors.of("deregister " + describe() + " on " + ctx.name(), e);
        }
        ctx.unmapForDevice(region());
    }
}
