package io.jhca.tests.resources;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Gids;
import io.jhca.tests.harness.Harness;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.LinkLayer;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.PortState;
import io.jhca.verbs.Verbs;
import io.jhca.verbs.VerbsException;

import java.net.InetAddress;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** ibv_query_device / ibv_query_port / ibv_query_gid values are sane, as rdma-core's tests/test_device.py checks. */
class DeviceQueryTest {

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void deviceAttributes(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            for (Context c : new Context[] {h.a(), h.b()}) {
                DeviceAttributes d = c.queryDevice();
                String w = c.name() + " " + d;
                assertTrue(d.physPortCnt() >= 1, w);
                assertNotEquals(0L, d.nodeGuid(), w);
                assertTrue(d.maxQp() > 0 && d.maxQpWr() > 0 && d.maxSge() > 0 && d.maxCq() > 0 && d.maxCqe() > 0, w);
                assertTrue(d.maxMr() > 0 && d.maxPd() > 0 && d.maxMrSize() > 0 && d.maxAh() > 0, w);
                assertTrue(d.maxQpRdAtom() >= 1 && d.maxQpInitRdAtom() >= 1 && d.maxResRdAtom() >= 0, w);
                assertTrue(d.maxPkeys() >= 1, w);
                assertTrue(d.maxSgeRd() >= 1 && d.maxSgeRd() <= d.maxSge(), w);
                assertTrue(d.maxInlineData() >= 0, w);
                assertEquals(c.device().nodeGuid(), d.nodeGuid(), "node GUID of " + c.name() + " as listed and as queried");
                if (c instanceof io.jhca.mlx5.Mlx5Context) {
                    // the kernel reports the PCI device ID; the model presents a ConnectX-5 PF (ibv_devinfo: 4119)
                    assertEquals(0x1017, d.vendorPartId(), w);
                    assertEquals(0x02c9, d.vendorId(), w);
                }
            }
            assertNotEquals(h.a().queryDevice().nodeGuid(), h.b().queryDevice().nodeGuid(), "two devices, two node GUIDs");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void portIsActiveEthernet(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            for (Context c : new Context[] {h.a(), h.b()}) {
                PortAttributes p = c.queryPort(1);
                String w = c.name() + " port 1 " + p;
                assertEquals(PortState.ACTIVE, p.state(), w);
                assertEquals(LinkLayer.ETHERNET, p.linkLayer(), w);
                assertTrue(p.activeMtu().bytes() <= p.maxMtu().bytes(), w);
                assertTrue(p.gidTblLen() >= 1, w);
                assertTrue(p.maxMsgSz() >= 1 << 20, w + ": max_msg_sz covers at least 1 MiB");
                int ports = c.queryDevice().physPortCnt();
                for (int bad : new int[] {0, ports + 1, -1}) {
                    VerbsException e = assertThrows(VerbsException.class, () -> c.queryPort(bad), "port " + bad);
                    assertEquals(VerbsException.EINVAL, e.errno());
                }
                VerbsException e = assertThrows(VerbsException.class, () -> c.queryGid(1, p.gidTblLen()));
                assertEquals(VerbsException.EINVAL, e.errno());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void gidTableCarriesTheDeviceAddress(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            check(h.a(), pair.addressA(), pair.isRxe());
            check(h.b(), pair.addressB(), pair.isRxe());
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void devicesAreListed(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            for (Context c : new Context[] {h.a(), h.b()}) {
                DeviceInfo info = c.device();
                String[] sides = pair.provider().split("\\+"); // "mlx5+rxe": a mixed pair names each side
                assertEquals(sides[c == h.a() ? 0 : sides.length - 1], info.provider(), c.name());
                assertFalse(info.name().isEmpty());
                if (pair.progress() == DevicePair.Progress.THREAD && pair.isRxe()) {
                    assertTrue(Verbs.devices().stream().anyMatch(d -> d.name().equals(info.name())),
                            info.name() + " is listed by Verbs.devices(): " + Verbs.devices());
                }
            }
        }
    }

    private static void check(Context c, InetAddress ip, boolean rxe) {
        int roce = Gids.roceIndex(c);
        Gid g = c.queryGid(1, roce);
        if (ip != null) {
            // RoCEv2 GID of an IPv4 address: ::ffff:a.b.c.d (rdma_ip2gid); Linux rxe puts it at index 1.
            Gid want = Gid.of(ip);
            assertEquals(want, g, c.name() + " RoCEv2 GID at index " + roce);
            assertEquals(want.toInetAddress(), g.toInetAddress());
            if (rxe) {
                assertEquals(1, roce, c.name() + ": the IPv4-mapped GID is at index 1, as Linux rxe lays the table out");
            }
        } else {
            assertFalse(g.isZero(), c.name() + " has a RoCEv2 GID");
        }
        if (rxe) {
            // Index 0: the IPv6 link-local address fe80::/64 with an EUI-64 interface id, as Linux rxe fills it.
            Gid ll = c.queryGid(1, 0);
            assertEquals((byte) 0xfe, ll.get(0), c.name() + " GID[0] " + ll);
            assertEquals((byte) 0x80, ll.get(1), c.name() + " GID[0] " + ll);
            for (int i = 2; i < 8; i++) {
                assertEquals(0, ll.get(i), c.name() + " GID[0] " + ll + " byte " + i);
            }
        }
    }
}
