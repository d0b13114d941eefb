package io.jhca.rxe.wire;

import static io.jhca.rxe.wire.TestSupport.hex;
import static io.jhca.rxe.wire.TestSupport.ipv4;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.zip.CRC32;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** ICRC test vectors A-E of rocev2.md §2.3 (A and B from scapy's roce.uts, A a real ConnectX-4 Lx capture). */
class IcrcVectorsTest {

    private final Icrc icrc = new Icrc();
    private final RocePacket packet = new RocePacket();

    /** A: RoCEv2 CNP captured on a ConnectX-4 Lx; IPv4 ID 0x718c, ICRC on the wire 82 fd 00 2a. */
    private static final String VECTOR_A = "e41d2dab2bc2 7cfe90643b32 0800"
            + "45c2003c718c400040119161 0a001101 0a001201"
            + "000012b700280000"
            + "8100ffff 40000118 00000000" + "00".repeat(16)
            + "82fd002a";

    /** C: RC SEND_ONLY "hello", AckReq, 192.168.10.1 -> .2, IPv4 ID 0x1234. */
    private static final String VECTOR_C = "020000000002020000000001 0800"
            + "450000341234400040119331c0a80a01c0a80a02"
            + "c12312b700200000"
            + "0430ffff0000001180000100"
            + "68656c6c6f000000"
            + "cabbfca0";
    private static final String VECTOR_C_MASKED_INPUT = "ffffffffffffffff"
            + "45ff003412344000ff11ffffc0a80a01c0a80a02"
            + "c12312b70020ffff"
            + "0430ffffff00001180000100"
            + "68656c6c6f000000";

    /** D: RC ACKNOWLEDGE, syndrome 0x1F, MSN 1 (IP packet; the spec elides the Ethernet header). */
    private static final String VECTOR_D_IP = "450000301234400040119335c0a80a01c0a80a02"
            + "c12312b7001c0000"
            + "1100ffff0000001200000100"
            + "1f000001"
            + "c0200b80";

    /** E: IPv6 RC SEND_ONLY "v6hello", fd00::1 -> fd00::2, hop limit 64. */
    private static final String VECTOR_E_IP = "6000000000201140"
            + "fd000000000000000000000000000001"
            + "fd000000000000000000000000000002"
            + "c12312b700200000"
            + "0410ffff0000001180000108"
            + "763668656c6c6f00"
            + "aaee2eed";

    @Test
    void vectorA_connectX4Capture() {
        final byte[] frame = hex(VECTOR_A);
        final UnsafeBuffer b = new UnsafeBuffer(frame);
        assertTrue(packet.parseEthernet(b, 0, frame.length));
        assertEquals(0x718C, packet.identification());
        assertEquals(28, packet.roceLength());
        assertEquals(0x2A00FD82, packet.icrc(), "wire bytes 82 fd 00 2a read little-endian");
        assertEquals(0x2A00FD82, icrc.computeIpPacket(b, 14, frame.length - 14));
        assertTrue(icrc.verifyIpPacket(b, 14, frame.length - 14));
        // The same from header fields, as a sender would compute it.
        assertEquals(0x2A00FD82, icrc.computeIpv4(ipv4(10, 0, 17, 1), ipv4(10, 0, 18, 1), 0x3C, 0x718C, 0x4000,
                0, 4791, 0x28, b, packet.roceIndex(), 28));
        // Receiver behind a UDP socket: ID unknown. Strict (ID 0) rejects, recovery finds the hardware's ID.
        assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.STRICT_ID_ZERO, ipv4(10, 0, 17, 1),
                ipv4(10, 0, 18, 1), 0, 4791, b, packet.roceIndex(), 32));
        assertEquals(0x718C, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, ipv4(10, 0, 17, 1), ipv4(10, 0, 18, 1), 0,
                4791, b, packet.roceIndex(), 32));
    }

    /** B: scapy's UC SEND_ONLY, built here from its fields; scapy asserts IP checksum 0xb4d5, ICRC 78f353f3. */
    @Test
    void vectorB_builtFromScapyFields() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[256]);
        packet.ipv4(ipv4(192, 168, 0, 7), ipv4(192, 168, 0, 7)).tos(1).identification(1144)
                .flagsFragment(PacketLayout.IPV4_DF).ttl(64).udpPorts(49152, 4791).udpChecksum(0xACA2)
                .macs(0x248A07A8FA22L, 0x248A07A8FA22L);
        final int roce = 14 + packet.roceOffset();
        new Bth().wrap(b, roce).clear().opcode(Opcode.UC_SEND_ONLY).migReq(true).padCnt(2).pkey(0xFFFF)
                .destQp(211).psn(13571856);
        // 18 payload bytes + 2 pad zeros, as in roce.uts
        final byte[] payload = hex("4630818be28935d90e9a955054 01be885e50 0000");
        b.putBytes(roce + Bth.LENGTH, payload);
        final int frameLength = packet.encodeEthernet(b, 0, Bth.LENGTH + payload.length, icrc);
        assertEquals(14 + 64, frameLength, "IPv4 total length 64");
        assertEquals(0xB4D5, b.getShort(14 + 10, ByteOrder.BIG_ENDIAN) & 0xFFFF, "IPv4 header checksum");
        assertEquals("78f353f3", hex(b.byteArray(), frameLength - 4, 4));
        assertTrue(icrc.verifyIpPacket(b, 14, frameLength - 14));
    }

    @Test
    void vectorC_bytesMaskedInputAndBuild() {
        final byte[] frame = hex(VECTOR_C);
        final UnsafeBuffer b = new UnsafeBuffer(frame);
        assertEquals(0xA0FCBBCA, Icrc.get(b, frame.length - 4));
        assertEquals(0xA0FCBBCA, icrc.computeIpPacket(b, 14, frame.length - 14));

        // The masked CRC input: our prefix (8 x FF, IP, UDP, BTH) followed by the rest of the packet.
        final byte[] masked = hex(VECTOR_C_MASKED_INPUT);
        final UnsafeBuffer out = new UnsafeBuffer(new byte[128]);
        final int n = icrc.maskedPrefix(b, 14, frame.length - 14, out, 0);
        assertEquals(8 + 20 + 8 + 12, n);
        final byte[] ours = new byte[masked.length];
        out.getBytes(0, ours, 0, n);
        System.arraycopy(frame, 14 + 28 + 12, ours, n, masked.length - n);
        assertArrayEquals(masked, ours);
        final CRC32 plain = new CRC32();
        plain.update(masked);
        assertEquals(0xA0FCBBCA, (int) plain.getValue(), "plain CRC-32 of the masked input is the ICRC");

        // Built from fields, the whole frame comes out byte for byte.
        final UnsafeBuffer built = new UnsafeBuffer(new byte[frame.length]);
        packet.ipv4(ipv4(192, 168, 10, 1), ipv4(192, 168, 10, 2)).tos(0).ttl(64).identification(0x1234)
                .flagsFragment(0x4000).udpPorts(0xC123, 4791).udpChecksum(0)
                .macs(0x020000000001L, 0x020000000002L);
        final int roce = 14 + packet.roceOffset();
        new Bth().wrap(built, roce).set(Opcode.RC_SEND_ONLY, false, Bth.padFor(5), 0xFFFF, 0x11, true, 0x100);
        built.putStringWithoutLengthAscii(roce + Bth.LENGTH, "hello");
        assertEquals(frame.length, packet.encodeEthernet(built, 0, Bth.LENGTH + 8, icrc));
        assertArrayEquals(frame, built.byteArray());
        assertEquals(0x1234, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, ipv4(192, 168, 10, 1),
                ipv4(192, 168, 10, 2), 0xC123, 4791, b, 14 + 28, frame.length - 14 - 28));
    }

    @Test
    void vectorD_acknowledge() {
        final byte[] ip = hex(VECTOR_D_IP);
        final UnsafeBuffer b = new UnsafeBuffer(ip);
        assertEquals(0x800B20C0, Icrc.get(b, ip.length - 4), "wire c0 20 0b 80");
        assertEquals(0x800B20C0, icrc.computeIpPacket(b, 0, ip.length));
        final Aeth aeth = new Aeth().wrap(b, 28 + Opcode.aethOffset(Opcode.RC_ACKNOWLEDGE));
        assertEquals(Aeth.SYNDROME_ACK, aeth.syndrome());
        assertEquals(1, aeth.msn());
        assertEquals(0x12, new Bth().wrap(b, 28).destQp());
    }

    @Test
    void vectorE_ipv6() {
        final byte[] ip = hex(VECTOR_E_IP);
        final UnsafeBuffer b = new UnsafeBuffer(ip);
        assertEquals(0xED2EEEAA, Icrc.get(b, ip.length - 4), "wire aa ee 2e ed");
        assertEquals(0xED2EEEAA, icrc.computeIpPacket(b, 0, ip.length));
        assertTrue(icrc.verifyIpv6(0xFD00000000000000L, 1L, 0xFD00000000000000L, 2L, 0xC123, 4791, b, 48,
                ip.length - 48));
        // Rebuilt from fields with a different traffic class, flow label and hop limit: masked, same ICRC.
        final UnsafeBuffer built = new UnsafeBuffer(new byte[ip.length]);
        built.putBytes(48, ip, 48, ip.length - 48 - 4);
        packet.ipv6(0xFD00000000000000L, 1L, 0xFD00000000000000L, 2L).trafficClass(0xB8).flowLabel(0x12345)
                .hopLimit(3).udpPorts(0xC123, 4791).udpChecksum(0);
        assertEquals(ip.length, packet.encode(built, 0, ip.length - 48 - 4, icrc));
        assertEquals(0xED2EEEAA, Icrc.get(built, ip.length - 4));
        packet.trafficClass(0).flowLabel(0).hopLimit(64);
        packet.encode(built, 0, ip.length - 48 - 4, icrc);
        assertArrayEquals(ip, built.byteArray());
    }
}
