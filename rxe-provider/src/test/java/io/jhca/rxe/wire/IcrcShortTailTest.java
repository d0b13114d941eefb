package io.jhca.rxe.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.zip.CRC32;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * A packet whose bytes after the BTH fit {@link Icrc#SHORT_TAIL} is fed to the CRC in one call from a copy, a longer
 * one in two: both give the ICRC that a plain CRC-32 over the masked bytes gives (rxe_icrc.c: 8 x 0xFF, the IPv4
 * header with TOS, TTL and checksum all ones, the UDP header with checksum 0xFFFF, the BTH with byte 4 all ones, the
 * rest), at the edge and either side of it, from heap and direct buffers, IPv4 and IPv6, sender and receiver.
 */
class IcrcShortTailTest {

    private static final int SRC = 0x0A000001;
    private static final int DST = 0x0A000002;
    private static final long SEED = Long.getLong("jhca.icrc.seed", new java.security.SecureRandom().nextLong());

    static {
        System.out.println("IcrcShortTailTest: seed " + SEED + "; replay with -Djhca.icrc.seed=" + SEED);
    }

    /** The ICRC computed here, byte by byte as rxe_icrc.c lays them out, for IPv4 ID {@code id} and DF. */
    private static int reference(byte[] roce, int id, int sport, int dport) {
        int udpLength = 8 + roce.length + 4;
        int total = 20 + udpLength;
        ByteBuffer b = ByteBuffer.allocate(8 + 20 + 8 + roce.length);
        for (int i = 0; i < 8; i++) {
            b.put((byte) 0xFF);
        }
        b.put((byte) 0x45).put((byte) 0xFF).putShort((short) total).putShort((short) id).putShort((short) 0x4000)
                .put((byte) 0xFF).put((byte) 17).putShort((short) 0xFFFF).putInt(SRC).putInt(DST);
        b.putShort((short) sport).putShort((short) dport).putShort((short) udpLength).putShort((short) 0xFFFF);
        byte[] masked = roce.clone();
        masked[4] = (byte) 0xFF;
        b.put(masked);
        CRC32 crc = new CRC32();
        crc.update(b.array());
        return (int) crc.getValue();
    }

    @Test
    void oneCallAndTwoGiveTheSameIcrcAtTheEdge() {
        Random rnd = new Random(SEED);
        Icrc icrc = new Icrc();
        int edge = Icrc.SHORT_TAIL;
        for (int tail : new int[] {0, 1, 4, 20, edge - 1, edge, edge + 1, edge + 4, 4096}) {
            byte[] roce = new byte[Bth.LENGTH + tail];
            rnd.nextBytes(roce);
            int id = rnd.nextInt(0x10000);
            int expected = reference(roce, id, 4791, 4791);
            UnsafeBuffer heap = new UnsafeBuffer(new byte[roce.length + 9], 5, roce.length + 4);
            UnsafeBuffer direct = new UnsafeBuffer(ByteBuffer.allocateDirect(roce.length + 16), 3, roce.length + 4);
            for (UnsafeBuffer b : new UnsafeBuffer[] {heap, direct}) {
                b.putBytes(0, roce);
                String what = "tail " + tail + ", " + (b.byteArray() != null ? "heap" : "direct") + ", seed " + SEED;
                assertEquals(expected, icrc.computeIpv4(SRC, DST, id, PacketLayout.IPV4_DF, 4791, 4791, b, 0,
                        roce.length), what);
                Icrc.put(b, roce.length, expected);
                assertEquals(id, icrc.verifyIpv4(Ipv4IdMode.AUTO, id, SRC, DST, PacketLayout.IPV4_DF, 4791, 4791, b,
                        0, roce.length + Icrc.LENGTH), "the receiver's check, " + what);
            }
        }
    }

    @Test
    void ipv6AtTheEdgeMatchesTheFullPacketPath() {
        Random rnd = new Random(SEED + 1);
        Icrc icrc = new Icrc();
        for (int tail : new int[] {Icrc.SHORT_TAIL, Icrc.SHORT_TAIL + 1}) {
            byte[] roce = new byte[Bth.LENGTH + tail];
            rnd.nextBytes(roce);
            int udpLength = 8 + roce.length + 4;
            // the same packet as an IPv6 datagram: the full-packet path takes every field from its headers
            UnsafeBuffer ip = new UnsafeBuffer(new byte[40 + udpLength]);
            ip.putInt(0, 0x60000000, java.nio.ByteOrder.BIG_ENDIAN);
            ip.putShort(4, (short) udpLength, java.nio.ByteOrder.BIG_ENDIAN);
            ip.putByte(6, (byte) 17);
            ip.putByte(7, (byte) 64);
            ip.putLong(8, 0xfd00000000000000L, java.nio.ByteOrder.BIG_ENDIAN);
            ip.putLong(16, 1, java.nio.ByteOrder.BIG_ENDIAN);
            ip.putLong(24, 0xfd00000000000000L, java.nio.ByteOrder.BIG_ENDIAN);
            ip.putLong(32, 2, java.nio.ByteOrder.BIG_ENDIAN);
            ip.putShort(40, (short) 4791, java.nio.ByteOrder.BIG_ENDIAN);
            ip.putShort(42, (short) 4791, java.nio.ByteOrder.BIG_ENDIAN);
            ip.putShort(44, (short) udpLength, java.nio.ByteOrder.BIG_ENDIAN);
            ip.putBytes(48, roce);
            int full = icrc.computeIpPacket(ip, 0, ip.capacity());
            UnsafeBuffer b = new UnsafeBuffer(roce);
            assertEquals(full, icrc.computeIpv6(0xfd00000000000000L, 1, 0xfd00000000000000L, 2, 4791, 4791, b, 0,
                    roce.length), "tail " + tail + ", seed " + SEED);
        }
    }
}
