package io.jhca.mlx5.cmd;

/**
 * SET_ROCE_ADDRESS and the RoCE address table entry {@code roce_addr_layout}: one GID of the port's table, with the
 * source MAC (and VLAN) the port sends it from, its L3 type and RoCE version. The kernel programs one entry per GID
 * this way (mlx5 core lib/gid.c {@code mlx5_core_roce_gid_set}, called from mlx5_ib {@code set_roce_addr}): the GID's
 * 16 bytes in source_l3_address, the MAC in source_mac_47_32/31_0, roce_l3_type IPv4 for an IPv4-mapped GID else IPv6,
 * roce_version 2 for RoCEv2. vhca_port_num is written only when cmd_hca_cap.num_vhca_ports is non-zero. Positions
 * from mlx5_ifc.h, constants from device.h; both checked by a golden test.
 */
public final class RoceAddressLayouts {

    /** device.h {@code MLX5_ROCE_VERSION_1 / _2}. */
    public static final int ROCE_VERSION_1 = 0;
    public static final int ROCE_VERSION_2 = 2;
    /** device.h {@code MLX5_ROCE_L3_TYPE_IPV4 / _IPV6}. */
    public static final int L3_TYPE_IPV4 = 0;
    public static final int L3_TYPE_IPV6 = 1;

    /** 32 bytes. {@code source_mac} is a 48-bit alias over source_mac_47_32 and source_mac_31_0. */
    public static final Layout ROCE_ADDR_LAYOUT = Layout.struct("roce_addr_layout", 0x20)
            .bytes("source_l3_address", 0x00, 16)
            .field("vlan_valid", 0x83, 1)
            .field("vlan_id", 0x84, 12)
            .field("source_mac_47_32", 0x90, 16)
            .field("source_mac_31_0", 0xa0, 32)
            .alias("source_mac", 0x90, 48)
            .field("roce_l3_type", 0xd4, 4)
            .field("roce_version", 0xd8, 8)
            .build();

    public static final Layout SET_ROCE_ADDRESS_IN = Layout.struct("set_roce_address_in", 0x30).inHeader(false)
            .field("roce_address_index", 0x40, 16)
            .field("vhca_port_num", 0x5c, 4)
            .embed("roce_address", 0x80, ROCE_ADDR_LAYOUT)
            .build();
    public static final Layout SET_ROCE_ADDRESS_OUT = Layout.struct("set_roce_address_out", 0x10).outHeader().build();

    private RoceAddressLayouts() {
    }
}
