package io.jhca.mlx5.init;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;

import io.jhca.mlx5.cmd.RoceAddressLayouts;
import io.jhca.verbs.Gid;

/**
 * The port's RoCEv2 GID table and the identity derived from its addresses, filled as Linux rxe fills its own (and as
 * the kernel's RoCE GID cache does from a netdev): index 0 the IPv6 link-local address fe80::/64 with the EUI-64 of
 * the port MAC as interface id, then each address of the port (IPv4 as the IPv4-mapped GID ::ffff:a.b.c.d). Every
 * entry is RoCE version 2; its L3 type is IPv4 for an IPv4-mapped GID, else IPv6 (mlx5_ib {@code set_roce_addr}).
 *
 * <p>There is no netdev here to read a MAC from, so the MAC is made from the first address the way jhca's rxe makes
 * it: locally administered, 02:00:a.b.c.d for IPv4, 02 + the last five bytes for IPv6. The node GUID is its EUI-64
 * (addrconf_addr_eui48: flip the U/L bit, insert ff:fe).
 */
public final class RoceGids {

    private final byte[] mac;
    private final long nodeGuid;
    private final List<Gid> gids;

    private RoceGids(byte[] mac, List<Gid> gids) {
        this.mac = mac;
        this.nodeGuid = eui64(mac);
        this.gids = gids;
    }

    /** The table for a port with these addresses (empty list: no GIDs at all). */
    public static RoceGids of(List<InetAddress> addresses) {
        if (addresses.isEmpty()) {
            return new RoceGids(new byte[6], List.of());
        }
        byte[] mac = macOf(addresses.get(0));
        List<Gid> g = new ArrayList<>();
        g.add(linkLocal(eui64(mac)));
        for (InetAddress a : addresses) {
            g.add(Gid.of(a));
        }
        return new RoceGids(mac, List.copyOf(g));
    }

    /** A locally administered unicast MAC for an IP address: 02:00:a.b.c.d (IPv4), 02 + last 5 bytes (IPv6). */
    public static byte[] macOf(InetAddress address) {
        byte[] ip = address.getAddress();
        byte[] m = new byte[6];
        m[0] = 0x02;
        if (address instanceof Inet4Address) {
            System.arraycopy(ip, 0, m, 2, 4);
        } else {
            System.arraycopy(ip, 11, m, 1, 5);
        }
        return m;
    }

    /** The MAC RoCE traffic to a GID goes to: {@link #macOf} of the address the GID stands for. */
    public static byte[] macOf(Gid gid) {
        if (gid.isMulticast()) {
            return multicastMacOf(gid);
        }
        return macOf(gid.toInetAddress());
    }

    /**
     * The Ethernet group address of a multicast GID (ib_addr.h rdma_get_mcast_mac): IPv4 01:00:5e plus the group's
     * low 23 bits (RFC 1112, ip_eth_mc_map), IPv6 33:33 plus its last four bytes (RFC 2464, ipv6_eth_mc_map).
     */
    static byte[] multicastMacOf(Gid gid) {
        byte[] g = gid.bytes();
        if (gid.isIpv4Mapped()) {
            return new byte[] {0x01, 0x00, 0x5e, (byte) (g[13] & 0x7f), g[14], g[15]};
        }
        return new byte[] {0x33, 0x33, g[12], g[13], g[14], g[15]};
    }

    static long eui64(byte[] mac) {
        byte[] e = {(byte) (mac[0] ^ 0x02), mac[1], mac[2], (byte) 0xff, (byte) 0xfe, mac[3], mac[4], mac[5]};
        long v = 0;
        for (byte b : e) {
            v = v << 8 | (b & 0xff);
        }
        return v;
    }

    static Gid linkLocal(long guid) {
        byte[] g = new byte[Gid.LENGTH];
        g[0] = (byte) 0xfe;
        g[1] = (byte) 0x80;
        for (int i = 0; i < 8; i++) {
            g[8 + i] = (byte) (guid >>> (56 - 8 * i));
        }
        return Gid.of(g);
    }

    /** Programs every entry with SET_ROCE_ADDRESS, index by index. */
    void program(HcaCommands cmds) {
        for (int i = 0; i < gids.size(); i++) {
            Gid g = gids.get(i);
            cmds.setRoceAddress(i, g.bytes(), mac.clone(),
                    g.isIpv4Mapped() ? RoceAddressLayouts.L3_TYPE_IPV4 : RoceAddressLayouts.L3_TYPE_IPV6,
                    RoceAddressLayouts.ROCE_VERSION_2);
        }
    }

    public byte[] mac() {
        return mac.clone();
    }

    public long nodeGuid() {
        return nodeGuid;
    }

    /** Number of programmed entries. */
    public int size() {
        return gids.size();
    }

    /** Entry {@code index}, or {@link Gid#ZERO} past the programmed ones. */
    public Gid gid(int index) {
        return index >= 0 && index < gids.size() ? gids.get(index) : Gid.ZERO;
    }
}
