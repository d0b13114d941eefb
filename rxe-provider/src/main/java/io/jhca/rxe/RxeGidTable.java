package io.jhca.rxe;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import io.jhca.verbs.Gid;
import io.jhca.verbs.GidType;
import io.jhca.verbs.VerbsException;

/**
 * The GID table of an rxe port, and which local address each entry sends from.
 *
 * <p>A device on a network interface gets the table Linux builds for an rxe device on that netdev
 * (drivers/infiniband/core/roce_gid_mgmt.c and cache.c, for a port that supports RoCE v2 only, as rxe's does:
 * rxe.c sets core_cap_flags to RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP): index 0 holds the default GID, fe80::EUI-64 of the
 * MAC; then every IP address of the interface, IPv4 ones first (as {@code ::ffff:a.b.c.d}) then IPv6 ones, a GID
 * already present (the link-local address equal to the default GID) not repeated. Every entry is RoCE v2, as in
 * Linux rxe's table (seen in a guest: {@code GID[1] ::ffff:10.88.0.2, RoCE v2}), so {@code -g 1} means the first
 * IPv4 address on both. A port that also speaks RoCE v1 (a ConnectX under mlx5_ib) lists each GID twice, v1 then
 * v2, so its index 3 is index 1 here.
 *
 * <p>A device on one address (the default loopback devices, {@code name=address}) has the same layout over that
 * one address: index 0 the link-local GID of its derived MAC, index 1 its address, both sending from it.
 */
public final class RxeGidTable {

    /** One entry: the GID, its type, and the index of the local address it sends from (-1: none). */
    public record Entry(Gid gid, GidType type, int via) {
    }

    private final List<Entry> entries;
    private final List<InetAddress> addresses;

    private RxeGidTable(final List<Entry> entries, final List<InetAddress> addresses) {
        this.entries = Collections.unmodifiableList(entries);
        this.addresses = Collections.unmodifiableList(addresses);
    }

    /** jhca's table of a device on one address: the link-local GID of {@code guid} and the address, RoCE v2. */
    static RxeGidTable single(final long guid, final InetAddress address) {
        final List<Entry> e = new ArrayList<>();
        e.add(new Entry(RxeDeviceAttributes.linkLocalGid(guid), GidType.ROCE_V2, 0));
        e.add(new Entry(Gid.of(address), GidType.ROCE_V2, 0));
        return new RxeGidTable(e, List.of(address));
    }

    /**
     * Linux rxe's table of a netdev whose node GUID is {@code guid} (EUI-64 of its MAC) and whose addresses are
     * {@code netdevAddresses} (in the interface's order; IPv6 link-local ones carry their scope). The addresses the
     * device binds are {@link #addresses()}: IPv4 first, then IPv6, each in the given order.
     */
    public static RxeGidTable forNetdev(final long guid, final List<InetAddress> netdevAddresses) {
        final List<InetAddress> bound = new ArrayList<>();
        for (final InetAddress a : netdevAddresses) {
            if (a instanceof Inet4Address && !bound.contains(a)) {
                bound.add(a);
            }
        }
        for (final InetAddress a : netdevAddresses) {
            if (a instanceof Inet6Address && !bound.contains(a)) {
                bound.add(a);
            }
        }
        final List<Entry> e = new ArrayList<>();
        final Gid defaultGid = RxeDeviceAttributes.linkLocalGid(guid);
        e.add(new Entry(defaultGid, GidType.ROCE_V2, indexOf(bound, defaultGid)));
        for (int i = 0; i < bound.size(); i++) {
            final Gid g = Gid.of(bound.get(i));
            if (!g.equals(defaultGid)) { // cache.c: an identical GID of the same type and netdev is not added twice
                e.add(new Entry(g, GidType.ROCE_V2, i));
            }
        }
        return new RxeGidTable(e, bound);
    }

    private static int indexOf(final List<InetAddress> bound, final Gid gid) {
        for (int i = 0; i < bound.size(); i++) {
            if (Gid.of(bound.get(i)).equals(gid)) {
                return i;
            }
        }
        return -1;
    }

    /** Filled entries (the rest of the port's {@value RxeDeviceAttributes#GID_TBL_LEN} are empty). */
    public int size() {
        return entries.size();
    }

    public Entry entry(final int index) {
        return entries.get(index);
    }

    /** The GID at {@code index}; {@link Gid#ZERO} beyond the filled entries. */
    public Gid gid(final int index) {
        return index >= 0 && index < entries.size() ? entries.get(index).gid() : Gid.ZERO;
    }

    /** The type of the entry at {@code index}; RoCE v2 for an empty one (what rxe's empty entries report). */
    public GidType type(final int index) {
        return index >= 0 && index < entries.size() ? entries.get(index).type() : GidType.ROCE_V2;
    }

    /** The local addresses the device binds, in the order {@link Entry#via()} counts. */
    public List<InetAddress> addresses() {
        return addresses;
    }

    /**
     * The local address index an address vector with {@code sgidIndex} sends from; refused when the entry is empty,
     * not RoCE v2 (jhca speaks RoCE v2 only) or a GID that is no address of the device.
     */
    public int sourceFor(final int sgidIndex, final String device, final String what) {
        if (sgidIndex < 0 || sgidIndex >= entries.size()) {
            throw new VerbsException(VerbsException.EINVAL, what + ": GID index " + sgidIndex + " of " + device
                    + " is empty (indices 0.." + (entries.size() - 1) + " are filled; hwlab devinfo -v lists them)");
        }
        final Entry e = entries.get(sgidIndex);
        if (e.type() != GidType.ROCE_V2) {
            throw new VerbsException(VerbsException.EINVAL, what + ": GID index " + sgidIndex + " of " + device
                    + " is " + e.type() + "; jhca speaks RoCE v2 only");
        }
        if (e.via() < 0) {
            throw new VerbsException(VerbsException.EINVAL, what + ": GID index " + sgidIndex + " of " + device
                    + " (" + e.gid() + ") is not an address of its interface, so nothing can be sent from it");
        }
        return e.via();
    }
}
