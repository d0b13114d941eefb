package io.jhca.mlx5.cmd;

/**
 * CREATE_MKEY / DESTROY_MKEY and the memory key context {@code mkc}. An MTT-mode key (access_mode_1_0 = 1) is
 * followed by its translation table: one big-endian 64-bit entry per page, {@code address | MTT_PERM_RW}, counted in
 * octwords ({@code translations_octword_size = (npages + 1) / 2}, rdma-core mlx5_vfio.c). The resulting lkey/rkey is
 * {@code mkey_index << 8 | mkey_7_0}. Unlike the queue contexts, mkc.log_page_size is the full page shift (rdma-core
 * sets {@code page_shift}, e.g. 12 for 4 KiB). Positions from mlx5_ifc.h.
 */
public final class MkeyLayouts {

    /** mlx5_ifc {@code MLX5_MKC_ACCESS_MODE_*} (low two bits go to access_mode_1_0, bits 4:2 to access_mode_4_2). */
    public static final int ACCESS_MODE_PA = 0x0;
    public static final int ACCESS_MODE_MTT = 0x1;
    public static final int ACCESS_MODE_KLMS = 0x2;
    public static final int ACCESS_MODE_KSM = 0x3;
    /** mlx5_ifc {@code MLX5_MTT_PERM_READ | MLX5_MTT_PERM_WRITE}: low bits of an MTT entry. */
    public static final long MTT_PERM_READ = 1L << 0;
    public static final long MTT_PERM_WRITE = 1L << 1;
    public static final long MTT_PERM_RW = MTT_PERM_READ | MTT_PERM_WRITE;

    public static final Layout MKC = Layout.struct("mkc", 0x40)
            .field("free", 0x01, 1)
            .field("access_mode_4_2", 0x03, 3)
            .field("relaxed_ordering_write", 0x0d, 1)
            .field("small_fence_on_rdma_read_response", 0x0f, 1)
            .field("umr_en", 0x10, 1)
            .field("a", 0x11, 1)
            .field("rw", 0x12, 1)
            .field("rr", 0x13, 1)
            .field("lw", 0x14, 1)
            .field("lr", 0x15, 1)
            .field("access_mode_1_0", 0x16, 2)
            .field("ma_translation_mode", 0x1a, 2)
            .field("qpn", 0x20, 24)
            .field("mkey_7_0", 0x38, 8)
            .field("length64", 0x60, 1)
            .field("bsf_en", 0x61, 1)
            .field("sync_umr", 0x62, 1)
            .field("expected_sigerr_count", 0x65, 1)
            .field("en_rinval", 0x67, 1)
            .field("pd", 0x68, 24)
            .field("start_addr", 0x80, 64)
            .field("len", 0xc0, 64)
            .field("bsf_octword_size", 0x100, 32)
            .field("translations_octword_size", 0x1a0, 32)
            .field("relaxed_ordering_read", 0x1d9, 1)
            .field("log_page_size", 0x1db, 5)
            .build();

    /**
     * klm_pas_mtt starts at byte 0x110. mlx5_ifc declares it in 32-bit units ({@code klm_pas_mtt[][0x20]}); an MTT
     * entry is two of them, so this layout indexes it in 64-bit entries.
     */
    public static final Layout CREATE_MKEY_IN = Layout.struct("create_mkey_in", 0x110).inHeader(true)
            .field("pg_access", 0x60, 1)
            .field("mkey_umem_valid", 0x61, 1)
            .embed("memory_key_mkey_entry", 0x80, MKC)
            .field("translations_octword_actual_size", 0x300, 32)
            .flexibleArray("klm_pas_mtt", 0x880, 64)
            .build();
    public static final Layout CREATE_MKEY_OUT = Layout.struct("create_mkey_out", 0x10).outHeader()
            .field("mkey_index", 0x48, 24)
            .build();

    public static final Layout DESTROY_MKEY_IN = Layout.struct("destroy_mkey_in", 0x10).inHeader(true)
            .field("mkey_index", 0x48, 24)
            .build();
    public static final Layout DESTROY_MKEY_OUT = Layout.struct("destroy_mkey_out", 0x10).outHeader().build();

    /** KLM entries a window's key is created with: the kernel's {@code roundup(1, 4)} (mlx5_ib_alloc_mw). */
    public static final int MW_KLM_DESCS = 4;

    private MkeyLayouts() {
    }

    /**
     * The memory key context of a memory window's key, as the kernel's mlx5_ib {@code mlx5_ib_alloc_mw} creates it:
     * free (bound to nothing until a UMR binds it), umr_en, lr, KLM access mode with room for 4 entries, remote
     * invalidation enabled for type 2 only, no QP (0xffffff), the PD, and the driver's tag byte. The input carries
     * no translation entries: a UMR WQE supplies them at bind time.
     */
    public static void setMwMkey(Struct createMkeyIn, int pdn, boolean type2, int tag) {
        String m = "memory_key_mkey_entry.";
        createMkeyIn.set(m + "free", 1)
                .set(m + "translations_octword_size", MW_KLM_DESCS)
                .set(m + "pd", pdn)
                .set(m + "umr_en", 1)
                .set(m + "lr", 1)
                .set(m + "access_mode_1_0", ACCESS_MODE_KLMS)
                .set(m + "en_rinval", type2 ? 1 : 0)
                .set(m + "qpn", 0xffffff)
                .set(m + "mkey_7_0", tag);
    }

    /**
     * CREATE_MKEY input length for {@code entries} MTT entries; the list is padded to whole octwords (2 entries),
     * as rdma-core's {@code DEVX_ST_SZ_BYTES(create_mkey_in) + sizeof(*pas) * align(num_pas, 2)}.
     */
    public static int createMkeyInLength(int entries) {
        return CREATE_MKEY_IN.sizeBytes((entries + 1) & ~1);
    }

    /** translations_octword_size for {@code entries} MTT entries: (entries + 1) / 2. */
    public static int octwords(int entries) {
        return (entries + 1) / 2;
    }

    /** One MTT entry: the page IOVA with permission bits in its low bits (rdma-core MLX5_MTT_PRESENT = RW). */
    public static long mttEntry(long pageIova, long permissions) {
        if ((pageIova & 0xfff) != 0) {
            throw new IllegalArgumentException(String.format("MTT page 0x%x is not 4 KiB aligned", pageIova));
        }
        return pageIova | (permissions & MTT_PERM_RW);
    }
}
