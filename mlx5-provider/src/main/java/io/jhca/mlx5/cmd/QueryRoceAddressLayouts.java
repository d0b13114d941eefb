package io.jhca.mlx5.cmd;

/**
 * QUERY_ROCE_ADDRESS: reads back one entry of the port's RoCE address (GID) table, the counterpart of
 * {@link RoceAddressLayouts#SET_ROCE_ADDRESS_IN}. Input: {@code roce_address_index} (and {@code vhca_port_num}); output:
 * the entry as a {@link RoceAddressLayouts#ROCE_ADDR_LAYOUT} at byte 0x10. Positions from the kernel's mlx5_ifc.h
 * ({@code struct mlx5_ifc_query_roce_address_in_bits} / {@code _out_bits}), checked by a golden test.
 */
public final class QueryRoceAddressLayouts {

    public static final Layout QUERY_ROCE_ADDRESS_IN = Layout.struct("query_roce_address_in", 0x10).inHeader(false)
            .field("roce_address_index", 0x40, 16)
            .field("vhca_port_num", 0x5c, 4)
            .build();
    public static final Layout QUERY_ROCE_ADDRESS_OUT = Layout.struct("query_roce_address_out", 0x30).outHeader()
            .embed("roce_address", 0x80, RoceAddressLayouts.ROCE_ADDR_LAYOUT)
            .build();

    private QueryRoceAddressLayouts() {
    }
}
