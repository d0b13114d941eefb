package io.jhca.rxe.replay;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

/** The fixtures' reader: what it takes from a real capture, and clear refusals of what it cannot read. */
class ClassicPcapTest {

    private static byte[] fixture(final String name) throws IOException {
        try (InputStream in = ClassicPcapTest.class.getResourceAsStream("/replay/" + name)) {
            return in.readAllBytes();
        }
    }

    private static IllegalArgumentException refused(final byte[] bytes) {
        return assertThrows(IllegalArgumentException.class,
                () -> ClassicPcap.read(new ByteArrayInputStream(bytes), "x.pcap"));
    }

    @Test
    void readsTheExchangeAndTheRocePacketsOfAFixture() throws IOException {
        final List<ClassicPcap.IpPacket> all = ClassicPcap.read(new ByteArrayInputStream(fixture("write-lat.pcap")),
                "write-lat.pcap");
        assertEquals(46, all.size()); // tshark -r write-lat.pcap | wc -l
        final ClassicPcap.IpPacket first = all.get(21); // frame 22: jhca's first RDMA WRITE
        assertEquals(22, first.frame);
        assertTrue(first.isUdp());
        assertEquals("10.88.0.1", first.src.getHostAddress());
        assertEquals(4791, first.srcPort);
        assertEquals(0, first.ipId);
        assertEquals(12 + 16 + 2 + 2 + 4, first.payload.length); // BTH, RETH, 2 bytes, pad 2, ICRC
        final Capture cap = Capture.load("write-lat.pcap");
        assertEquals(0x13, cap.requesterDest.qpn);
        assertEquals(0xc66ab5, cap.requesterDest.psn);
        assertEquals(0x11, cap.responderDest.qpn);
        assertEquals(0xfa0878, cap.responderDest.psn);
        assertEquals(0x101, cap.responderDest.rkey);
        assertEquals(0x7f9ac000a000L, cap.responderDest.va);
        assertEquals(20, cap.roce.size());
    }

    @Test
    void refusesWhatItCannotRead() throws IOException {
        assertTrue(refused(new byte[10]).getMessage().contains("shorter than a pcap header"));
        final byte[] ng = new byte[32];
        ByteBuffer.wrap(ng).order(ByteOrder.LITTLE_ENDIAN).putInt(0x0A0D0D0A);
        assertTrue(refused(ng).getMessage().contains("pcapng"), refused(ng).getMessage());
        final byte[] good = fixture("read-lat.pcap");
        final byte[] otherLink = good.clone();
        ByteBuffer.wrap(otherLink).order(ByteOrder.LITTLE_ENDIAN).putInt(20, 113); // Linux cooked capture
        assertTrue(refused(otherLink).getMessage().contains("linktype 113"), refused(otherLink).getMessage());
        final IllegalArgumentException cut = refused(Arrays.copyOf(good, good.length - 3));
        assertTrue(cut.getMessage().contains("past the end"), cut.getMessage());
        final byte[] snapped = good.clone();
        ByteBuffer.wrap(snapped).order(ByteOrder.LITTLE_ENDIAN).putInt(24 + 12, 9999); // frame 1's original length
        assertTrue(refused(snapped).getMessage().contains("frame 1 was cut by the snap length"),
                refused(snapped).getMessage());
    }
}
