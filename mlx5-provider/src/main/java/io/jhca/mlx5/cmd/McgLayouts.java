package io.jhca.mlx5.cmd;

/**
 * ATTACH_TO_MCG / DETACH_FROM_MCG: a UD QP joins or leaves a multicast group, named by its 16-byte GID in network
 * order (on RoCE an IPv4-mapped or IPv6 multicast address). mlx5_ib sends them from ib_attach_mcast /
 * ib_detach_mcast (mlx5_core mcg.c {@code mlx5_core_attach_mcg}). Positions from mlx5_ifc.h
 * {@code struct mlx5_ifc_attach_to_mcg_in_bits} and {@code detach_from_mcg_in_bits}.
 */
public final class McgLayouts {

    public static final Layout ATTACH_TO_MCG_IN = Layout.struct("attach_to_mcg_in", 0x20).inHeader(true)
            .field("qpn", 0x48, 24)
            .bytes("multicast_gid", 0x80, 16)
            .build();
    public static final Layout ATTACH_TO_MCG_OUT = Layout.struct("attach_to_mcg_out", 0x10).outHeader().build();

    public static final Layout DETACH_FROM_MCG_IN = Layout.struct("detach_from_mcg_in", 0x20).inHeader(true)
            .field("qpn", 0x48, 24)
            .bytes("multicast_gid", 0x80, 16)
            .build();
    public static final Layout DETACH_FROM_MCG_OUT = Layout.struct("detach_from_mcg_out", 0x10).outHeader().build();

    private McgLayouts() {
    }
}
