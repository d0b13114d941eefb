package io.jhca.rxe.wire;

import static io.jhca.rxe.wire.TestSupport.PYTHON;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** ICRC against scapy.contrib.roce (an independent implementation): our packets to scapy, scapy's to us. */
class ScapyOracleTest {

    private static final int FORWARD_COUNT = 200;
    private static final int REVERSE_COUNT = 200;

    @TempDir
    Path dir;

    @BeforeAll
    static void scapyPresent() throws Exception {
        TestSupport.requireScapy();
    }

    static List<Integer> validOpcodes() {
        final List<Integer> ops = new ArrayList<>();
        for (int op = 0; op < 256; op++) {
            if (Opcode.isValid(op)) {
                ops.add(op);
            }
        }
        return ops;
    }

    /** Fills BTH, every extension header and the payload of {@code op} with random values; returns RoCE length. */
    static int randomRoce(final UnsafeBuffer b, final int roce, final int op, final int payload, final Random rnd) {
        final int pad = Bth.padFor(payload);
        new Bth().wrap(b, roce).opcode(op).se(rnd.nextBoolean()).migReq(rnd.nextBoolean()).padCnt(pad)
                .tVer(0).pkey(rnd.nextBoolean() ? 0xFFFF : 0x7FFF).fecnBecnByte(rnd.nextInt(256))
                .destQp(rnd.nextInt(1 << 24)).ackReq(rnd.nextBoolean()).resv7(rnd.nextInt(128))
                .psn(rnd.nextInt(1 << 24));
        for (int i = Bth.LENGTH; i < Opcode.payloadOffset(op) + payload; i++) {
            b.putByte(roce + i, (byte) rnd.nextInt());
        }
        final int end = Opcode.payloadOffset(op) + payload;
        for (int i = 0; i < pad; i++) {
            b.putByte(roce + end + i, (byte) 0);
        }
        return end + pad;
    }

    @Test
    void scapyAgreesWithOurIcrcOnRandomPackets() throws Exception {
        final Path pcap = dir.resolve("ours.pcap");
        final Random rnd = new Random(42);
        final List<Integer> ops = validOpcodes();
        final int[] sizes = {0, 1, 2, 3, 4, 5, 7, 64, 255, 256, 1000, 1024, 4096};
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8192]);
        final Icrc icrc = new Icrc();
        final RocePacket packet = new RocePacket();
        try (PcapWriter w = PcapWriter.create(pcap, PcapWriter.LINKTYPE_ETHERNET)) {
            for (int i = 0; i < FORWARD_COUNT; i++) {
                final int op = ops.get(i % ops.size());
                final int payload = Opcode.hasPayload(op) ? sizes[rnd.nextInt(sizes.length)] : 0;
                packet.ipv4(rnd.nextInt(), rnd.nextInt()).tos(rnd.nextInt(256)).ttl(rnd.nextInt(256))
                        .identification(i % 10 == 0 ? 0 : rnd.nextInt(0x10000))
                        .flagsFragment(i % 3 == 0 ? 0 : PacketLayout.IPV4_DF)
                        .udpPorts(rnd.nextInt(0x10000), 4791).udpChecksum(rnd.nextInt(0x10000));
                final int roceLength = randomRoce(b, packet.roceOffset(), op, payload, rnd);
                final int length = packet.encode(b, 0, roceLength, icrc);
                w.writeIpPacket(b, 0, length, i * 1000L);
            }
        }
        final TestSupport.Result r = TestSupport.run("python3-scapy",
                List.of(PYTHON, TestSupport.resource("scapy_icrc_check.py").toString(), pcap.toString()), 120);
        assertEquals(0, r.exitCode(), r.stderr());
        final List<String> lines = r.stdout().lines().toList();
        assertEquals(List.of("CHECKED " + FORWARD_COUNT), lines, "scapy found mismatches or non-RoCE frames");
    }

    @Test
    void weAcceptScapysPacketsAndRecoverTheirIds() throws Exception {
        final Path pcap = dir.resolve("scapy.pcap");
        final TestSupport.Result r = TestSupport.run("python3-scapy", List.of(PYTHON,
                TestSupport.resource("scapy_make_packets.py").toString(), pcap.toString(),
                Integer.toString(REVERSE_COUNT), "7"), 120);
        assertEquals(0, r.exitCode(), r.stderr());
        assertEquals("WROTE " + REVERSE_COUNT, r.stdout().strip());
        final List<byte[]> frames = TestSupport.readPcap(pcap, PcapWriter.LINKTYPE_ETHERNET);
        assertEquals(REVERSE_COUNT, frames.size());

        final Icrc icrc = new Icrc();
        final PacketValidator validator = new PacketValidator();
        final RocePacket packet = new RocePacket();
        final Random rnd = new Random(8);
        int zeroIds = 0;
        int validated = 0;
        for (int i = 0; i < frames.size(); i++) {
            final byte[] frame = frames.get(i);
            final UnsafeBuffer b = new UnsafeBuffer(frame);
            assertTrue(packet.parseEthernet(b, 0, frame.length), "frame " + i);
            final String what = "frame " + i + " " + Opcode.name(b.getByte(packet.roceIndex()));
            assertTrue(icrc.verifyIpPacket(b, 14, frame.length - 14), what);
            final int at = packet.roceIndex();
            final int udpPayload = packet.roceLength() + Icrc.LENGTH;
            final int id = packet.identification();
            assertEquals(id, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, packet.srcAddr(), packet.dstAddr(),
                    packet.flagsFragment(), packet.udpSrcPort(), packet.udpDstPort(), b, at, udpPayload), what);
            assertEquals(id == 0 ? 0 : Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.STRICT_ID_ZERO, packet.srcAddr(),
                    packet.dstAddr(), packet.flagsFragment(), packet.udpSrcPort(), packet.udpDstPort(), b, at,
                    udpPayload), what);
            zeroIds += id == 0 ? 1 : 0;
            if (packet.flagsFragment() == PacketLayout.IPV4_DF) {
                assertEquals(PacketStatus.OK, PacketStatus.of(validator.validateIpv4(Ipv4IdMode.RECOVER_ID,
                        packet.srcAddr(), packet.dstAddr(), packet.udpSrcPort(), packet.udpDstPort(), b, at,
                        udpPayload)), what);
                assertEquals(id, validator.lastIpv4Id());
                validated++;
            }
            // One flipped bit after the BTH's masked byte 4 must be caught.
            final int victim = 5 + rnd.nextInt(udpPayload - 5);
            b.putByte(at + victim, (byte) (b.getByte(at + victim) ^ 1 << rnd.nextInt(8)));
            assertFalse(icrc.verifyIpPacket(b, 14, frame.length - 14), what + " corrupted at " + victim);
        }
        assertEquals(REVERSE_COUNT / 10, zeroIds);
        assertTrue(validated > REVERSE_COUNT / 2);
    }
}
