package io.jhca.rxe.wire;

import static io.jhca.rxe.wire.TestSupport.hex;
import static io.jhca.rxe.wire.TestSupport.ipv4;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Frame builder/parser and the pcap file format. */
class RocePacketTest {

    @TempDir
    Path dir;

    private final Icrc icrc = new Icrc();

    private int buildIpv4(final UnsafeBuffer b, final RocePacket p, final int payload) {
        p.ipv4(ipv4(192, 168, 1, 1), ipv4(192, 168, 1, 2)).tos(0x2E).ttl(1).identification(0xBEEF)
                .udpPorts(0xC132, 4791);
        final int roce = 14 + p.roceOffset();
        new Bth().wrap(b, roce).set(Opcode.RC_SEND_ONLY, true, Bth.padFor(payload), 0xFFFF, 0x12, true, 7);
        return p.encodeEthernet(b, 0, Bth.LENGTH + payload + Bth.padFor(payload), icrc);
    }

    @Test
    void ipv4RoundTripAndHeaderChecksum() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[256]);
        final int length = buildIpv4(b, new RocePacket(), 10);
        assertEquals(14 + 20 + 8 + 12 + 12 + 4, length);
        assertEquals(0, PacketLayout.ipv4HeaderChecksum(b, 14), "a correct header sums to zero");
        final RocePacket q = new RocePacket();
        assertTrue(q.parseEthernet(b, 0, length));
        assertEquals(4, q.ipVersion());
        assertEquals(ipv4(192, 168, 1, 1), q.srcAddr());
        assertEquals(ipv4(192, 168, 1, 2), q.dstAddr());
        assertEquals(0x2E, q.tos());
        assertEquals(1, q.ttl());
        assertEquals(0xBEEF, q.identification());
        assertEquals(PacketLayout.IPV4_DF, q.flagsFragment());
        assertEquals(0xC132, q.udpSrcPort());
        assertEquals(4791, q.udpDstPort());
        assertEquals(0, q.udpChecksum());
        assertEquals(14 + 28, q.roceIndex());
        assertEquals(24, q.roceLength());
        assertEquals(Icrc.get(b, length - 4), q.icrc());
        assertTrue(icrc.verifyIpPacket(b, 14, length - 14));
        // Every shorter view of the frame is refused, without reading past it.
        for (int n = 0; n < length; n++) {
            final byte[] cut = new byte[n];
            b.getBytes(0, cut);
            assertFalse(q.parseEthernet(new UnsafeBuffer(cut), 0, n), "cut to " + n);
            if (n >= 14) {
                assertFalse(icrc.verifyIpPacket(new UnsafeBuffer(cut), 14, n - 14), "cut to " + n);
            }
        }
    }

    @Test
    void ipv6RoundTrip() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[256]);
        final RocePacket p = new RocePacket().ipv6(0xFE80000000000000L, 0x0200_00FF_FE00_0001L,
                0xFD00_0000_0000_0001L, 0xFFFF_FFFF_FFFF_FFFFL).trafficClass(0xB8).flowLabel(0xFFFFF).hopLimit(255)
                .udpPorts(0xC000, 4791);
        final int roce = p.roceOffset();
        assertEquals(48, roce);
        new Bth().wrap(b, roce).set(Opcode.UD_SEND_ONLY, false, 0, 0xFFFF, 1, false, 0);
        new Deth().wrap(b, roce + Bth.LENGTH).set(Deth.GSI_QKEY, 1);
        final int length = p.encode(b, 0, Bth.LENGTH + Deth.LENGTH, icrc);
        assertEquals(48 + 20 + 4, length);
        final byte[] head = new byte[8];
        b.getBytes(0, head);
        assertArrayEquals(hex("6b8fffff 0020 11 ff"), head, "version, class 0xB8, flow label, length, UDP, hops");
        final RocePacket q = new RocePacket();
        assertTrue(q.parse(b, 0, length));
        assertEquals(6, q.ipVersion());
        assertEquals(List.of(0xB8, 0xFFFFF, 255), List.of(q.trafficClass(), q.flowLabel(), q.hopLimit()));
        assertEquals(List.of(0xFE80000000000000L, 0x0200_00FF_FE00_0001L, 0xFD00_0000_0000_0001L, -1L),
                List.of(q.srcHi(), q.srcLo(), q.dstHi(), q.dstLo()));
        assertTrue(icrc.verifyIpPacket(b, 0, length));
        assertTrue(icrc.verifyIpv6(q.srcHi(), q.srcLo(), q.dstHi(), q.dstLo(), 0xC000, 4791, b, roce, 24));
    }

    @Test
    void vlanTaggedFrameParses() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[256]);
        final int length = buildIpv4(b, new RocePacket(), 3);
        final UnsafeBuffer tagged = new UnsafeBuffer(new byte[length + 4]);
        tagged.putBytes(0, b, 0, 12);
        tagged.putBytes(12, hex("8100 0064"));
        tagged.putBytes(16, b, 12, length - 12);
        final RocePacket q = new RocePacket();
        assertTrue(q.parseEthernet(tagged, 0, length + 4));
        assertEquals(18 + 28, q.roceIndex());
        assertTrue(icrc.verifyIpPacket(tagged, 18, length - 14));
    }

    @Test
    void notRocePackets() {
        final RocePacket q = new RocePacket();
        final UnsafeBuffer b = new UnsafeBuffer(new byte[256]);
        final int length = buildIpv4(b, new RocePacket(), 4);
        b.putByte(14 + 9, (byte) 6); // TCP
        assertFalse(q.parse(b, 14, length - 14));
        assertFalse(icrc.verifyIpPacket(b, 14, length - 14));
        assertThrows(IllegalArgumentException.class, () -> icrc.computeIpPacket(b, 14, length - 14));
        b.putByte(14 + 9, (byte) 17);
        b.putByte(14, (byte) 0x46); // IPv4 options
        assertFalse(q.parse(b, 14, length - 14));
        b.putByte(14, (byte) 0x45);
        b.putShort(14 + 20 + 4, (short) 99, java.nio.ByteOrder.BIG_ENDIAN); // UDP length disagrees
        assertFalse(q.parse(b, 14, length - 14));
        final Random rnd = new Random(12);
        for (int i = 0; i < 20_000; i++) {
            final byte[] junk = new byte[rnd.nextInt(100)];
            rnd.nextBytes(junk);
            if (junk.length > 0 && rnd.nextBoolean()) {
                junk[0] = (byte) (rnd.nextBoolean() ? 0x45 : 0x60);
            }
            final UnsafeBuffer j = new UnsafeBuffer(junk);
            q.parse(j, 0, junk.length);
            q.parseEthernet(j, 0, junk.length);
            icrc.verifyIpPacket(j, 0, junk.length);
        }
    }

    @Test
    void pcapFileFormat() throws Exception {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[256]);
        final int frame = buildIpv4(b, new RocePacket(), 5);
        final Path eth = dir.resolve("eth.pcap");
        try (PcapWriter w = PcapWriter.create(eth, PcapWriter.LINKTYPE_ETHERNET)) {
            w.writeIpPacket(b, 14, frame - 14, 1_500_000_123_456_789_000L);
            w.write(b, 0, frame, 2_000_000_000L);
        }
        final byte[] file = Files.readAllBytes(eth);
        assertArrayEquals(hex("d4c3b2a1 0200 0400 00000000 00000000 0d000100 01000000"), java.util.Arrays.copyOf(file, 24),
                "magic a1b2c3d4 LE, v2.4, snaplen 65549, LINKTYPE_ETHERNET");
        final UnsafeBuffer f = new UnsafeBuffer(file);
        assertEquals(1_500_000_123, f.getInt(24, java.nio.ByteOrder.LITTLE_ENDIAN));
        assertEquals(456_789, f.getInt(28, java.nio.ByteOrder.LITTLE_ENDIAN));
        final List<byte[]> records = TestSupport.readPcap(eth, PcapWriter.LINKTYPE_ETHERNET);
        assertEquals(2, records.size());
        final byte[] original = new byte[frame];
        b.getBytes(0, original);
        assertArrayEquals(original, records.get(0), "synthetic Ethernet header = the builder's default MACs");
        assertArrayEquals(original, records.get(1));

        final Path raw = dir.resolve("raw.pcap");
        try (PcapWriter w = PcapWriter.create(raw, PcapWriter.LINKTYPE_RAW)) {
            w.writeIpPacket(b, 14, frame - 14, 0);
        }
        final List<byte[]> rawRecords = TestSupport.readPcap(raw, PcapWriter.LINKTYPE_RAW);
        assertArrayEquals(java.util.Arrays.copyOfRange(original, 14, frame), rawRecords.get(0));
    }
}
