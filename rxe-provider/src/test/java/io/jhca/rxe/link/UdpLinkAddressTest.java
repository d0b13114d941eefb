package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Addresses the JDK will not bind on Linux, 127.x.y.255 (its NET_Bind refuses them before the system call), get an
 * error that says so instead of a BindException that suspects another RoCE device; their neighbours bind.
 */
@Timeout(10)
class UdpLinkAddressTest {

    @Test
    void aLoopbackAddressEndingIn255IsRefusedWithItsReason() throws Exception {
        assumeTrue(System.getProperty("os.name", "").startsWith("Linux"), "the JDK's refusal is Linux's");
        for (String a : new String[] {"127.11.0.255", "127.0.0.255", "127.255.255.255"}) {
            InetAddress at = InetAddress.getByName(a);
            assertTrue(UdpLink.refusedByTheJdk(at), a);
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> UdpLink.open(new InetSocketAddress(at, 0), 1 << 16));
            assertTrue(e.getMessage().contains("the JDK refuses") && e.getMessage().contains(a), e.getMessage());
            assertFalse(e.getMessage().contains("another RoCE device"), e.getMessage());
        }
        for (String a : new String[] {"127.11.0.254", "127.11.1.0", "127.11.255.1"}) {
            InetAddress at = InetAddress.getByName(a);
            assertFalse(UdpLink.refusedByTheJdk(at), a);
            try (UdpLink link = UdpLink.open(new InetSocketAddress(at, 0), 1 << 16)) {
                assertTrue(link.localAddress().getPort() > 0, a);
            }
        }
        assertFalse(UdpLink.refusedByTheJdk(InetAddress.getByName("10.0.0.255")), "not a loopback address");
        assertFalse(UdpLink.refusedByTheJdk(InetAddress.getByName("::ffff:7f00:1")), "IPv6 (and ::ffff:127.0.0.1)");
    }
}
