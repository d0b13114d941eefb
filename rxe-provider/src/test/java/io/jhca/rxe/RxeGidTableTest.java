package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.List;

import org.junit.jupiter.api.Test;

import io.jhca.verbs.Gid;
import io.jhca.verbs.GidType;
import io.jhca.verbs.VerbsException;

/** The GID table of a device on an interface, from fixture addresses, against the layout Linux builds. */
class RxeGidTableTest {

    /** 52:54:00:12:34:56, whose EUI-64 link-local address is fe80::5054:ff:fe12:3456. */
    private static final byte[] MAC = {0x52, 0x54, 0x00, 0x12, 0x34, 0x56};

    private static InetAddress ip(final String s) throws Exception {
        return InetAddress.getByName(s);
    }

    private static RxeDeviceConfig fixture() throws Exception {
        // the interface's order as Java lists it: IPv6 first; Linux enumerates IPv4 first
        final InetAddress ll = Inet6Address.getByAddress(null, ip("fe80::5054:ff:fe12:3456").getAddress(), 7);
        return RxeDeviceConfig.builder("rxe5").netdev("eth9", MAC, 9000,
                List.of(ll, ip("fd00::1"), ip("192.0.2.5"), ip("10.0.0.1"), ip("fe80::1"))).build();
    }

    @Test
    void linuxRxeLayoutDefaultGidThenEachAddressAllRoceV2() throws Exception {
        final RxeGidTable t = fixture().gidTable();
        final String[] gids = {"fe80::5054:ff:fe12:3456", "::ffff:192.0.2.5", "::ffff:10.0.0.1", "fd00::1", "fe80::1"};
        assertEquals(gids.length, t.size(), "the link-local address equal to the default GID is not repeated");
        for (int i = 0; i < gids.length; i++) {
            assertEquals(Gid.of(ip(gids[i])), t.gid(i), "GID " + i);
            assertEquals(GidType.ROCE_V2, t.type(i), "type of GID " + i);
        }
        assertEquals(Gid.ZERO, t.gid(gids.length));
        assertEquals(List.of(ip("192.0.2.5"), ip("10.0.0.1"), ip("fe80::5054:ff:fe12:3456"), ip("fd00::1"),
                ip("fe80::1")), t.addresses(), "bound: IPv4 first, then IPv6, each in the interface's order");
        assertEquals(2, t.sourceFor(0, "rxe5", "test"), "the default GID sends from the link-local address it equals");
        assertEquals(0, t.sourceFor(1, "rxe5", "test"));
        assertEquals(1, t.sourceFor(2, "rxe5", "test"));
        assertEquals(3, t.sourceFor(3, "rxe5", "test"));
        assertEquals(4, t.sourceFor(4, "rxe5", "test"));
    }

    @Test
    void emptyEntriesAndADefaultGidWithoutItsAddressAreRefused() throws Exception {
        final RxeGidTable t = fixture().gidTable();
        for (final int bad : new int[] {-1, 5, 1023}) {
            final VerbsException e = assertThrows(VerbsException.class, () -> t.sourceFor(bad, "rxe5", "modify QP"));
            assertTrue(e.getMessage().contains("GID index " + bad + " of rxe5 is empty"), e.getMessage());
        }
        // without its link-local address the default GID is listed but nothing can leave from it
        final RxeGidTable noLl = RxeGidTable.forNetdev(RxeDeviceAttributes.guidOf(MAC), List.of(ip("192.0.2.5")));
        assertEquals(2, noLl.size());
        final VerbsException e = assertThrows(VerbsException.class, () -> noLl.sourceFor(0, "rxe5", "create AH"));
        assertTrue(e.getMessage().contains("not an address"), e.getMessage());
        assertEquals(0, noLl.sourceFor(1, "rxe5", "create AH"));
    }

    @Test
    void identityFromTheInterface() throws Exception {
        final RxeDeviceConfig c = fixture();
        assertEquals("eth9", c.netdev());
        assertEquals(ip("192.0.2.5"), c.address(), "the first IPv4 address names the device");
        assertEquals(9000, c.netdevMtu());
        assertEquals(0x505400fffe123456L, RxeProvider.info(c).nodeGuid(), "node GUID: EUI-64 of the MAC");
        final RxeDeviceAttributes a = new RxeDeviceAttributes(c.mac(), c.gidTable(), c.netdevMtu(), c.maxSrqSge());
        assertEquals(io.jhca.verbs.Mtu.MTU_4096, a.port().activeMtu());
        assertEquals(Gid.of(ip("::ffff:10.0.0.1")), a.gid(2));
    }

    @Test
    void aDeviceOnOneAddressKeepsItsTwoEntries() throws Exception {
        final RxeDeviceConfig c = RxeDeviceConfig.builder("x").address("127.0.0.9").build();
        final RxeGidTable t = c.gidTable();
        assertEquals(2, t.size());
        assertEquals(Gid.of(ip("::ffff:127.0.0.9")), t.gid(1));
        assertEquals(GidType.ROCE_V2, t.type(0));
        assertEquals(GidType.ROCE_V2, t.type(1));
        assertEquals(List.of(ip("127.0.0.9")), t.addresses());
    }

    @Test
    void anInterfaceWithoutAddressIsRefused() {
        final IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> RxeDeviceConfig.builder("x").netdev("eth9", MAC, 1500, List.of()));
        assertTrue(e.getMessage().contains("ip address add"), e.getMessage());
    }
}
