package io.jhca.mlx5.cmd;

/**
 * ALLOC_UAR / DEALLOC_UAR and ALLOC_PD / DEALLOC_PD. A UAR index n is the 4 KiB page BAR0 + n * 4096; a PD is a
 * 24-bit number put into mkc.pd and qpc.pd. Positions from mlx5_ifc.h.
 */
public final class UarPdLayouts {

    public static final Layout ALLOC_UAR_IN = Layout.struct("alloc_uar_in", 0x10).inHeader(true).build();
    public static final Layout ALLOC_UAR_OUT = Layout.struct("alloc_uar_out", 0x10).outHeader()
            .field("uar", 0x48, 24)
            .build();

    public static final Layout DEALLOC_UAR_IN = Layout.struct("dealloc_uar_in", 0x10).inHeader(true)
            .field("uar", 0x48, 24)
            .build();
    public static final Layout DEALLOC_UAR_OUT = Layout.struct("dealloc_uar_out", 0x10).outHeader().build();

    public static final Layout ALLOC_PD_IN = Layout.struct("alloc_pd_in", 0x10).inHeader(true).build();
    public static final Layout ALLOC_PD_OUT = Layout.struct("alloc_pd_out", 0x10).outHeader()
            .field("pd", 0x48, 24)
            .build();

    public static final Layout DEALLOC_PD_IN = Layout.struct("dealloc_pd_in", 0x10).inHeader(true)
            .field("pd", 0x48, 24)
            .build();
    public static final Layout DEALLOC_PD_OUT = Layout.struct("dealloc_pd_out", 0x10).outHeader().build();

    private UarPdLayouts() {
    }
}
