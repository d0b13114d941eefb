package io.jhca.lab;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetAddress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The UDP stream floor of the bandwidth tests: every byte arrives, bad arguments and addresses are named. */
class UdpStreamTest {

    @Test
    void streamsEveryDatagramOfMessagesThatDoNotFillTheirLastDatagram() throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        // 10000 bytes in 4096-byte datagrams: 4096 + 4096 + 1808, three per message, seven messages
        UdpStream.Result r = UdpStream.run(lo, lo, 10_000, 7, 4096, 2, 10_000);
        assertEquals(10_000, r.size());
        assertEquals(7, r.iters());
        assertEquals(0, r.datagramsLost(), "every datagram arrived");
        assertTrue(r.mibPerSec() > 0 && r.msgRate() > 0, r.toString());
        // one message, one datagram of exactly one MTU
        assertEquals(0, UdpStream.run(lo, lo, 4096, 1, 4096, 1, 10_000).datagramsLost());
    }

    @Test
    void refusesWhatCannotBeStreamed() {
        InetAddress lo = InetAddress.getLoopbackAddress();
        assertThrows(IllegalArgumentException.class, () -> UdpStream.run(lo, lo, 0, 1, 4096, 1, 1000));
        assertThrows(IllegalArgumentException.class, () -> UdpStream.run(lo, lo, 64, 0, 4096, 1, 1000));
        assertThrows(IllegalArgumentException.class, () -> UdpStream.run(lo, lo, 64, 1, 0, 1, 1000));
        assertThrows(IllegalArgumentException.class, () -> UdpStream.run(lo, lo, 64, 1, 4096, 0, 1000));
    }

    @Test
    void namesAnAddressThatIsNotLocal() throws IOException {
        // TEST-NET-1 (RFC 5737): never an address of this host, so the bind fails before anything is sent
        IOException e = assertThrows(IOException.class,
                () -> UdpStream.run(InetAddress.getByName("192.0.2.1"), InetAddress.getLoopbackAddress(), 64, 1, 4096, 1, 1000));
        assertTrue(e.getMessage().contains("192.0.2.1"), e.getMessage());
    }

    @Test
    void aTimeLimitStopsTheStreamAtAWholeMessageAndCountsWhatWasAnswered() throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        // 10^9 messages of 10000 B would take hours: the floor of a -D run stops sending after the limit, finishes
        // the message it is in (three datagrams each) and counts only answered messages
        long asked = 1_000_000_000L;
        UdpStream.Result r = UdpStream.runFor(lo, lo, 10_000, asked, 4096, 8, 10_000, 200_000_000L);
        assertTrue(r.iters() > 0 && r.iters() < asked, r.toString());
        assertEquals(0, r.datagramsLost(), r.toString());
        assertTrue(r.mibPerSec() > 0, r.toString());
        // a limit longer than the stream changes nothing: every message, as without one
        assertEquals(7, UdpStream.runFor(lo, lo, 10_000, 7, 4096, 2, 10_000, 60_000_000_000L).iters());
        assertThrows(IllegalArgumentException.class, () -> UdpStream.runFor(lo, lo, 64, 1, 4096, 1, 1000, -1));
    }

    @Test
    void aSmallReceiveBufferNarrowsTheWindowInsteadOfLosingDatagrams() throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        // 128 KiB of socket buffer (below any rmem_max) against a tx depth of 128 messages of 64 KiB: a window
        // taken from tx depth or from an rxe device's 4 MiB would overrun the receiver and stall the stream
        UdpStream.Result r = UdpStream.run(lo, lo, 65_536, 200, 4096, 128, 5_000, 128 * 1024);
        assertEquals(0, r.datagramsLost(), r.toString());
        assertEquals(200, r.iters());
    }

    /**
     * The floor by GSO counts a burst's datagrams as the plain one counts them one by one: 3 datagrams a message in
     * one send (4 KiB datagrams, three a burst), 16 in bursts of 3, 3, 3, 3, 3 and 1, and at a 1 KiB MTU bursts of 4;
     * no datagram lost, every message answered.
     */
    @Test
    void theGsoFloorCountsEveryDatagramOfItsBursts() throws IOException {
        InetAddress lo = InetAddress.getLoopbackAddress();
        assertEquals(3, io.jhca.rxe.link.UdpGso.segmentsPerBurst(4096));
        assertEquals(4, io.jhca.rxe.link.UdpGso.segmentsPerBurst(1024));
        UdpStream.Result r = UdpStream.runGso(lo, lo, 10_000, 7, 4096, 2, 10_000, 0);
        assertEquals(7, r.iters());
        assertEquals(0, r.datagramsLost(), r.toString());
        r = UdpStream.runGso(lo, lo, 65_536, 200, 4096, 16, 10_000, 0);
        assertEquals(200, r.iters());
        assertEquals(0, r.datagramsLost(), r.toString());
        r = UdpStream.runGso(lo, lo, 5 * 1024, 50, 1024, 8, 10_000, 0);
        assertEquals(50, r.iters());
        assertEquals(0, r.datagramsLost(), r.toString());
    }
}
