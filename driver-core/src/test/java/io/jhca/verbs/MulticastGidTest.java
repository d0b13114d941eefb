package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** Which GIDs name multicast groups on RoCEv2 (rdma_is_multicast_addr), at the edges of each range. */
class MulticastGidTest {

    @Test
    void ipv4MappedGroupsAre224To239() {
        assertFalse(Gid.parse("00000000000000000000ffffdfffffff").isMulticast(), "223.255.255.255");
        assertTrue(Gid.parse("00000000000000000000ffffe0000000").isMulticast(), "224.0.0.0");
        assertTrue(Gid.parse("00000000000000000000ffffefffffff").isMulticast(), "239.255.255.255");
        assertFalse(Gid.parse("00000000000000000000fffff0000000").isMulticast(), "240.0.0.0");
        assertFalse(Gid.parse("00000000000000000000ffff7f000001").isMulticast(), "127.0.0.1");
    }

    @Test
    void ipv6GroupsStartWithFf() {
        assertTrue(Gid.parse("ff0e0000000000000000000000000001").isMulticast(), "ff0e::1");
        assertTrue(Gid.parse("ff120000000000000000000000000001").isMulticast(), "ff12::1");
        assertFalse(Gid.parse("fe800000000000000000000000000001").isMulticast(), "fe80::1");
        assertFalse(Gid.ZERO.isMulticast(), "::");
        // an IPv4-mapped GID is judged by its IPv4 address, never by byte 0
        assertFalse(Gid.parse("00000000000000000000ffff0a000001").isMulticast(), "::ffff:10.0.0.1");
    }

    @Test
    void anAddressVectorToAGroupIsMulticast() {
        assertTrue(AhAttributes.to(Gid.parse("00000000000000000000ffffef010203")).isMulticast());
        assertFalse(AhAttributes.to(Gid.parse("00000000000000000000ffff7f000001")).isMulticast());
        assertEquals(0xFFFFFF, QueuePair.MULTICAST_QPN);
    }
}
