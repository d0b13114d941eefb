package io.jhca.rxe.wire;

import static io.jhca.rxe.wire.TestSupport.ipv4;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.zip.CRC32;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * IPv4 Identification recovery (rocev2.md §2.4): the GF(2) pieces checked against java.util.zip.CRC32 and
 * plain polynomial arithmetic, then end to end on packets.
 */
class IcrcIdRecoveryTest {

    private static final int SRC = ipv4(10, 1, 2, 3);
    private static final int DST = ipv4(10, 4, 5, 6);
    /** CRC input offset of the IPv4 ID field: 8 x 0xFF, then IPv4 byte 4. */
    private static final int ID_POSITION = 8 + 4;
    /** CRC input offset of the UDP payload: 8 + 20 + 8. */
    private static final int UDP_PAYLOAD_POSITION = 36;

    private final Icrc icrc = new Icrc();
    private final RocePacket packet = new RocePacket();

    private static int crc(final byte[] bytes) {
        final CRC32 c = new CRC32();
        c.update(bytes);
        return (int) c.getValue();
    }

    @Test
    void twoByteContributionMatchesCrc32AndIsInvertedForAll65536Values() {
        final int zero = crc(new byte[2]);
        final Set<Integer> image = new HashSet<>();
        for (int v = 0; v < 0x10000; v++) {
            // CRC(m) = L1(init) ^ L2(m): the difference to the all-zero message is the contribution alone.
            final int contribution = crc(new byte[] {(byte) (v >>> 8), (byte) v}) ^ zero;
            assertEquals(contribution, Crc32Gf2.twoBytes(v), "F(" + v + ")");
            assertEquals(v, Crc32Gf2.solveTwoBytes(contribution), "F^-1(F(" + v + "))");
            image.add(contribution);
        }
        assertEquals(0x10000, image.size(), "F is injective: 2^16 distinct contributions");
    }

    @Test
    void unshiftUndoesZeroBytesAndMatchesCrc32() {
        final Random rnd = new Random(1);
        for (final int n : new int[] {0, 1, 2, 7, 8, 255, 256, 4096 + 42, 26767, 65535}) {
            final byte[] a = new byte[2 + n];
            final byte[] b = new byte[2 + n];
            a[0] = (byte) rnd.nextInt();
            a[1] = (byte) rnd.nextInt();
            // CRC32 difference of (v, n zeros) and (0, n zeros) is Z_n(F(v)).
            final int shifted = crc(a) ^ crc(b);
            final int v = (a[0] & 0xFF) << 8 | (a[1] & 0xFF);
            assertEquals(shifted, Crc32Gf2.shiftZeroBytes(Crc32Gf2.twoBytes(v), n), "Z_" + n);
            assertEquals(Crc32Gf2.twoBytes(v), Crc32Gf2.unshiftZeroBytes(shifted, n), "Z_" + n + "^-1");
            for (int i = 0; i < 100; i++) {
                final int r = rnd.nextInt();
                assertEquals(r, Crc32Gf2.unshiftZeroBytes(Crc32Gf2.shiftZeroBytes(r, n), n));
            }
        }
    }

    @Test
    void randomSyndromesAreAcceptedAtRateTwoToTheMinus16() {
        final Random rnd = new Random(2);
        int accepted = 0;
        final int trials = 2_000_000;
        for (int i = 0; i < trials; i++) {
            if (Crc32Gf2.solveTwoBytes(Crc32Gf2.unshiftZeroBytes(rnd.nextInt(), 1000)) >= 0) {
                accepted++;
            }
        }
        // Expected 2e6 / 65536 = 30.5; bounds are > 5 sigma wide (the seed is fixed anyway).
        assertTrue(accepted >= 10 && accepted <= 60, "accepted " + accepted + " of " + trials);
    }

    /** Builds an RC SEND_ONLY with {@code payload} random bytes and IPv4 ID {@code id}; returns the UDP payload offset. */
    private int build(final UnsafeBuffer b, final Random rnd, final int payload, final int id) {
        packet.ipv4(SRC, DST).identification(id).flagsFragment(PacketLayout.IPV4_DF).tos(rnd.nextInt(256))
                .ttl(rnd.nextInt(256)).udpPorts(0xC000 | rnd.nextInt(0x4000), 4791).udpChecksum(0);
        final int roce = packet.roceOffset();
        final int pad = Bth.padFor(payload);
        new Bth().wrap(b, roce).set(Opcode.RC_SEND_ONLY, rnd.nextBoolean(), pad, 0xFFFF, rnd.nextInt(1 << 24),
                true, rnd.nextInt(1 << 24));
        for (int i = 0; i < payload; i++) {
            b.putByte(roce + Bth.LENGTH + i, (byte) rnd.nextInt());
        }
        for (int i = 0; i < pad; i++) {
            b.putByte(roce + Bth.LENGTH + payload + i, (byte) 0);
        }
        packet.encode(b, 0, Bth.LENGTH + payload + pad, icrc);
        return roce;
    }

    private int udpPayloadLength() {
        return packet.roceLength() + Icrc.LENGTH;
    }

    private int recover(final UnsafeBuffer b, final int at) {
        return icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, packet.udpSrcPort(), 4791, b, at,
                udpPayloadLength());
    }

    @Test
    void randomIdsAreRecoveredAndStrictModeWantsZero() {
        final Random rnd = new Random(3);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8192]);
        final int[] special = {0, 1, 0x8000, 0xFFFF};
        for (int i = 0; i < 2000; i++) {
            final int id = i < special.length ? special[i] : rnd.nextInt(0x10000);
            final int payload = i % 7 == 0 ? 4096 : rnd.nextInt(1500);
            final int at = build(b, rnd, payload, id);
            assertEquals(id, recover(b, at), "recovered ID, payload " + payload);
            assertEquals(id == 0 ? 0 : Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.STRICT_ID_ZERO, SRC, DST,
                    packet.udpSrcPort(), 4791, b, at, udpPayloadLength()));
            assertTrue(icrc.verifyIpPacket(b, 0, packet.roceOffset() + udpPayloadLength()));
        }
    }

    /**
     * With an expected ID (a coalesced datagram's second segment carries 1): a packet sent with it matches it, in
     * strict mode too, where nothing else does; other IDs are still recovered, relative to it, by the other modes.
     */
    @Test
    void anExpectedIdIsTheFullCheckAndOthersAreStillRecovered() {
        final Random rnd = new Random(5);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8192]);
        final int[] expected = {1, 0, 0xFFFF, 0x1234};
        for (int i = 0; i < 400; i++) {
            final int e = expected[i % expected.length];
            final int id = i < 8 ? (i % 2 == 0 ? e : 0) : rnd.nextInt(0x10000);
            final int at = build(b, rnd, rnd.nextInt(1500), id);
            for (final Ipv4IdMode mode : new Ipv4IdMode[] {Ipv4IdMode.AUTO, Ipv4IdMode.RECOVER_ID}) {
                assertEquals(id, icrc.verifyIpv4(mode, e, SRC, DST, PacketLayout.IPV4_DF, packet.udpSrcPort(), 4791,
                        b, at, udpPayloadLength()), mode + ", expected " + e + ", sent " + id);
            }
            assertEquals(id == e ? e : Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.STRICT_ID_ZERO, e, SRC, DST,
                    PacketLayout.IPV4_DF, packet.udpSrcPort(), 4791, b, at, udpPayloadLength()),
                    "strict, expected " + e + ", sent " + id);
        }
    }

    /**
     * Every single-bit error in a maximum-MTU packet (4096 bytes payload) is rejected in RECOVER_ID mode: each bit
     * of the UDP payload except BTH byte 4 (masked to ones by design, rxe ignores it too), and each bit of the
     * addresses and ports the receiver supplies.
     */
    @Test
    void recoverModeRejectsEverySingleBitErrorOutsideTheIdField() {
        final Random rnd = new Random(4);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[8192]);
        for (final int payload : new int[] {0, 13, 4096}) {
            final int id = 1 + rnd.nextInt(0xFFFF);
            final int at = build(b, rnd, payload, id);
            final int length = udpPayloadLength();
            final int sport = packet.udpSrcPort();
            int flips = 0;
            for (int i = 0; i < length; i++) {
                if (i == Bth.FECN_BECN_OFFSET) {
                    continue;
                }
                for (int bit = 0; bit < 8; bit++) {
                    b.putByte(at + i, (byte) (b.getByte(at + i) ^ (1 << bit)));
                    assertEquals(Icrc.NO_MATCH, recover(b, at), "byte " + i + " bit " + bit + " flipped");
                    b.putByte(at + i, (byte) (b.getByte(at + i) ^ (1 << bit)));
                    flips++;
                }
            }
            for (int bit = 0; bit < 32; bit++) {
                assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, SRC ^ 1 << bit, DST, sport, 4791,
                        b, at, length));
                assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST ^ 1 << bit, sport, 4791,
                        b, at, length));
                flips += 2;
            }
            for (int bit = 0; bit < 16; bit++) {
                assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, sport ^ 1 << bit, 4791,
                        b, at, length));
                assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, sport, 4791 ^ 1 << bit,
                        b, at, length));
                flips += 2;
            }
            assertEquals((length - 1) * 8 + 96, flips);
            assertEquals(id, recover(b, at), "restored packet verifies again");
        }
    }

    /**
     * The math behind the claim in {@link Ipv4IdMode#RECOVER_ID}, done with plain polynomials (not the reflected
     * tables): a bit error m bits after the ID field's last bit (m < 0) or before its first (m >= 16) goes
     * undetected iff x^m mod P has degree < 16, i.e. equals the contribution of some ID change.
     */
    @Test
    void singleBitErrorsOutsideTheIdAreDetectedUpTo26766BytesAfterIt() {
        final long p = 0x1_04C1_1DB7L;
        final List<Integer> undetected = new ArrayList<>();
        long v = 1; // x^0
        for (int m = 0; m >= -8 * 65535; m--) {
            if (m < 0 && v < 0x10000) {
                undetected.add(m);
            }
            v = (v & 1) != 0 ? (v ^ p) >>> 1 : v >>> 1; // times x^-1 (P(0) = 1)
        }
        v = 1;
        for (int m = 1; m < 16 + 8 * ID_POSITION; m++) { // everything before the ID in the CRC input
            v <<= 1;
            if ((v & 0x1_0000_0000L) != 0) {
                v ^= p;
            }
            if (m >= 16 && v < 0x10000) {
                undetected.add(m);
            }
        }
        assertEquals(List.of(-214135, -227787, -290143, -290144, -304017), undetected);
        // -214135 = -(8 * 26766 + 7): the nearest blind spot is bit 6 of the byte 26766 bytes after the ID field.
        assertEquals(8 * 26766 + 7, 214135);
    }

    /** The blind spot predicted above exists: a packet long enough to contain it accepts that one flip. */
    @Test
    void thePredictedBlindSpotIsReal() {
        final Random rnd = new Random(5);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[32768]);
        final int id = 0x2345;
        final int at = build(b, rnd, 30000, id);
        final int blindByte = ID_POSITION + 2 + 26766 - UDP_PAYLOAD_POSITION;
        b.putByte(at + blindByte, (byte) (b.getByte(at + blindByte) ^ 0x40));
        final int other = recover(b, at);
        assertNotEquals(Icrc.NO_MATCH, other, "undetected, as the math says");
        assertNotEquals(id, other, "but it comes back as another ID");
        assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.STRICT_ID_ZERO, SRC, DST, packet.udpSrcPort(), 4791,
                b, at, udpPayloadLength()), "a full 32-bit check would see it");
        for (final int neighbour : new int[] {0x20, 0x80}) {
            b.putByte(at + blindByte, (byte) (b.getByte(at + blindByte) ^ 0x40 ^ neighbour));
            assertEquals(Icrc.NO_MATCH, recover(b, at));
            b.putByte(at + blindByte, (byte) (b.getByte(at + blindByte) ^ neighbour ^ 0x40));
        }
        b.putByte(at + blindByte, (byte) (b.getByte(at + blindByte) ^ 0x40));
        assertEquals(id, recover(b, at));
    }

    @Test
    void truncatedOrOversizedInputIsNoMatch() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[16]);
        assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, 1, 4791, b, 0, 15));
        assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, 1, 4791, b, 0, 0));
        final UnsafeBuffer big = new UnsafeBuffer(new byte[65536]);
        assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, 1, 4791, big, 0, 65535 - 27));
    }
}
