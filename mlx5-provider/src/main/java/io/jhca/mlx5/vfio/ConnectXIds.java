package io.jhca.mlx5.vfio;

import java.util.Map;

/**
 * The PCI IDs of the functions this driver speaks to: vendor Mellanox (0x15b3), ConnectX-4 and later, physical and
 * virtual functions. Source: Linux drivers/net/ethernet/mellanox/mlx5/core/main.c {@code mlx5_core_pci_table} and
 * rdma-core providers/mlx5/mlx5.c {@code hca_table} (identical lists). Connect-IB (0x1011/0x1012) is left out: it
 * predates the Ethernet/RoCE personality this driver programs.
 */
public final class ConnectXIds {

    /** PCI vendor ID of Mellanox (now NVIDIA networking). */
    public static final int VENDOR = 0x15b3;

    /** Device ID to product name; "VF" marks a virtual function. */
    private static final Map<Integer, String> DEVICES = Map.ofEntries(
            Map.entry(0x1013, "ConnectX-4"), Map.entry(0x1014, "ConnectX-4 VF"),
            Map.entry(0x1015, "ConnectX-4 Lx"), Map.entry(0x1016, "ConnectX-4 Lx VF"),
            Map.entry(0x1017, "ConnectX-5"), Map.entry(0x1018, "ConnectX-5 VF"),
            Map.entry(0x1019, "ConnectX-5 Ex"), Map.entry(0x101a, "ConnectX-5 Ex VF"),
            Map.entry(0x101b, "ConnectX-6"), Map.entry(0x101c, "ConnectX-6 VF"),
            Map.entry(0x101d, "ConnectX-6 Dx"), Map.entry(0x101e, "ConnectX family mlx5Gen VF"),
            Map.entry(0x101f, "ConnectX-6 Lx"),
            Map.entry(0x1021, "ConnectX-7"), Map.entry(0x1023, "ConnectX-8"),
            Map.entry(0x1025, "ConnectX-9"), Map.entry(0x1027, "ConnectX-10"),
            Map.entry(0xa2d2, "BlueField"), Map.entry(0xa2d3, "BlueField VF"),
            Map.entry(0xa2d6, "BlueField-2"), Map.entry(0xa2dc, "BlueField-3"), Map.entry(0xa2df, "BlueField-4"));

    private ConnectXIds() {
    }

    /** Whether {@code vendor:device} is a ConnectX-4-or-later function. */
    public static boolean supported(int vendor, int device) {
        return vendor == VENDOR && DEVICES.containsKey(device);
    }

    /** The product name of a supported device ID, or null. */
    public static String product(int device) {
        return DEVICES.get(device);
    }
}
