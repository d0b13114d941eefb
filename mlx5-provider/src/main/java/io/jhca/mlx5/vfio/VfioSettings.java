package io.jhca.mlx5.vfio;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

import io.jhca.pci.PciAddress;

/**
 * What the vfio backend is told from outside, each a system property with an environment fallback:
 * <ul>
 *   <li>{@value #ADDRESSES_PROPERTY} / {@value #ADDRESSES_ENV}: the port addresses of each function, e.g.
 *       {@code 0000:03:00.0=192.0.2.5;0000:03:00.1=192.0.2.6}, several per function joined with {@code |}. A
 *       function bound to vfio-pci has no kernel netdev to take them from, yet the driver must program them as
 *       RoCE GIDs.</li>
 *   <li>{@value #TEST_PROPERTY} / {@value #TEST_ENV} (off by default): the test mode, e.g.
 *       {@code 1af4:1110,bar=2,iova=physical}. Functions with that vendor:device are listed too, the BAR with that
 *       index stands for BAR0, and DMA is mapped with IOVA = physical address, so that a device model outside a
 *       virtual machine (which sees the guest's RAM by guest-physical address) can follow the driver's DMA. It exists
 *       to run the driver against the ConnectX model through the real vfio stack in a VM (ivshmem's IDs).</li>
 * </ul>
 *
 * @param testVendor -1 when the test mode is off
 */
public record VfioSettings(Map<PciAddress, List<InetAddress>> addresses, int testVendor, int testDevice, int testBar,
                           boolean testPhysicalIova) {

    public static final String ADDRESSES_PROPERTY = "jhca.mlx5.vfio.addresses";
    public static final String ADDRESSES_ENV = "JHCA_MLX5_VFIO_ADDRESSES";
    public static final String TEST_PROPERTY = "jhca.mlx5.vfio.test";
    public static final String TEST_ENV = "JHCA_MLX5_VFIO_TEST";

    /** Normal operation: ConnectX IDs only, BAR0, allocated IOVAs, no port addresses. */
    public static final VfioSettings NONE = new VfioSettings(Map.of(), -1, -1, 0, false);

    public VfioSettings {
        addresses = Map.copyOf(addresses);
    }

    /** From the system properties, else the environment. */
    public static VfioSettings fromEnvironment() {
        return parse(setting(ADDRESSES_PROPERTY, ADDRESSES_ENV), setting(TEST_PROPERTY, TEST_ENV));
    }

    private static String setting(String property, String env) {
        String v = System.getProperty(property);
        if (v == null || v.isBlank()) {
            v = System.getenv(env);
        }
        return v == null || v.isBlank() ? null : v.trim();
    }

    /**
     * @param addresses {@code BDF=IP[|IP...]} entries separated by {@code ;} or {@code ,}; null for none
     * @param test      {@code VENDOR:DEVICE[,bar=N][,iova=physical|allocated]}; null for off
     */
    public static VfioSettings parse(String addresses, String test) {
        Map<PciAddress, List<InetAddress>> map = new LinkedHashMap<>();
        if (addresses != null && !addresses.isBlank()) {
            for (String entry : addresses.split("[;,]")) {
                if (entry.isBlank()) {
                    continue;
                }
                int eq = entry.indexOf('=');
                if (eq < 0) {
                    throw new IllegalArgumentException(ADDRESSES_PROPERTY + ": '" + entry.trim()
                            + "' is not BDF=IP (e.g. 0000:03:00.0=192.0.2.5)");
                }
                PciAddress bdf = PciAddress.parse(entry.substring(0, eq));
                List<InetAddress> ips = new ArrayList<>();
                for (String ip : entry.substring(eq + 1).split("\\|")) {
                    ips.add(ipLiteral(ip.trim()));
                }
                if (map.putIfAbsent(bdf, List.copyOf(ips)) != null) {
                    throw new IllegalArgumentException(ADDRESSES_PROPERTY + ": " + bdf + " is given twice");
                }
            }
        }
        if (test == null || test.isBlank()) {
            return new VfioSettings(map, -1, -1, 0, false);
        }
        String[] parts = test.split(",");
        String[] id = parts[0].trim().split(":");
        if (id.length != 2) {
            throw new IllegalArgumentException(TEST_PROPERTY + ": '" + parts[0].trim() + "' is not VENDOR:DEVICE in hex"
                    + " (e.g. 1af4:1110)");
        }
        int vendor = hex16(id[0], "vendor");
        int device = hex16(id[1], "device");
        int bar = 0;
        boolean physical = false;
        for (int i = 1; i < parts.length; i++) {
            String p = parts[i].trim().toLowerCase(Locale.ROOT);
            if (p.startsWith("bar=")) {
                try {
                    bar = Integer.parseInt(p.substring(4));
                } catch (NumberFormatException e) {
                    bar = -1;
                }
                if (bar < 0 || bar > 5) {
                    throw new IllegalArgumentException(TEST_PROPERTY + ": '" + p + "': a BAR index is 0 to 5");
                }
            } else if (p.equals("iova=physical")) {
                physical = true;
            } else if (p.equals("iova=allocated")) {
                physical = false;
            } else {
                throw new IllegalArgumentException(TEST_PROPERTY + ": unknown option '" + p
                        + "' (known: bar=N, iova=physical, iova=allocated)");
            }
        }
        return new VfioSettings(map, vendor, device, bar, physical);
    }

    private static int hex16(String s, String what) {
        try {
            int v = Integer.parseInt(s.trim(), 16);
            if (v >= 0 && v <= 0xffff) {
                return v;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException(TEST_PROPERTY + ": " + what + " ID '" + s.trim() + "' is not 16-bit hex");
    }

    /** An IP literal only: a device listing must never cause a name lookup. */
    private static InetAddress ipLiteral(String s) {
        boolean v4 = s.matches("(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])){3}");
        // a string with a colon is only ever parsed as an IPv6 literal by InetAddress, never looked up
        boolean v6 = s.contains(":") && s.matches("[0-9a-fA-F:.]+");
        if (!v4 && !v6) {
            throw new IllegalArgumentException(ADDRESSES_PROPERTY + ": '" + s + "' is not an IPv4 or IPv6 address");
        }
        try {
            return InetAddress.getByName(s);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(ADDRESSES_PROPERTY + ": '" + s + "' is not an IP address", e);
        }
    }

    /** Whether the test mode is on. */
    public boolean testMode() {
        return testVendor >= 0;
    }

    /** Whether a function with these IDs is one this backend drives. */
    public boolean accepts(int vendor, int device) {
        return ConnectXIds.supported(vendor, device) || (testMode() && vendor == testVendor && device == testDevice);
    }

    /** Whether these IDs are accepted only through the test mode. */
    public boolean testFunction(int vendor, int device) {
        return !ConnectXIds.supported(vendor, device) && testMode() && vendor == testVendor && device == testDevice;
    }

    /** The port addresses configured for {@code bdf}; empty when none. */
    public List<InetAddress> addressesOf(PciAddress bdf) {
        return addresses.getOrDefault(bdf, List.of());
    }
}
