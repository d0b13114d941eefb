package io.jhca.lab;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;

import org.junit.jupiter.api.Test;

import io.jhca.verbs.Gid;

/** Servers listen where rdma-core's do: every address by default, one address with --bind. */
class ListenAddressTest {

    @Test
    void defaultIsEveryAddressSoAnotherHostCanConnect() throws Exception {
        InetAddress a = GidChoice.serverListenAddress(null);
        assertTrue(a.isAnyLocalAddress(), a + " is not the wildcard");
        try (ServerSocket ss = OobLink.listen(a, 0)) {
            assertEquals("all addresses, TCP port " + ss.getLocalPort(), OobLink.describe(ss));
            // reachable through any local address, not only the device's GID address
            for (String via : new String[] {"127.0.0.1", "127.0.0.9"}) {
                try (Socket s = new Socket(via, ss.getLocalPort()); Socket accepted = ss.accept()) {
                    assertEquals(InetAddress.getByName(via), accepted.getLocalAddress());
                }
            }
        }
    }

    @Test
    void bindNarrowsToOneAddress() throws Exception {
        InetAddress a = GidChoice.serverListenAddress("127.0.0.3");
        assertEquals(InetAddress.getByName("127.0.0.3"), a);
        try (ServerSocket ss = OobLink.listen(a, 0)) {
            assertEquals("127.0.0.3:" + ss.getLocalPort(), OobLink.describe(ss));
        }
    }

    @Test
    void inProcessExchangeStaysOnLoopback() throws Exception {
        Gid remoteLooking = Gid.parse("0000:0000:0000:0000:0000:ffff:0a58:0001"); // ::ffff:10.88.0.1
        assertEquals(InetAddress.getByName("127.0.0.1"), GidChoice.inProcessListenAddress(remoteLooking, null));
        Gid loop = Gid.parse("0000:0000:0000:0000:0000:ffff:7f00:0002"); // ::ffff:127.0.0.2
        assertEquals(InetAddress.getByName("127.0.0.2"), GidChoice.inProcessListenAddress(loop, null));
    }
}
