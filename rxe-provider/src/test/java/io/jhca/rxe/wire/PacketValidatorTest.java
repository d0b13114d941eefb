package io.jhca.rxe.wire;

import static io.jhca.rxe.wire.TestSupport.hex;
import static io.jhca.rxe.wire.TestSupport.ipv4;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/**
 * Every malformed case gives its status, without exceptions and without reading outside the packet: each packet
 * is copied into a buffer of exactly its length, where Agrona's bounds checks would throw on any stray read.
 */
class PacketValidatorTest {

    private static final int SRC = ipv4(10, 0, 0, 1);
    private static final int DST = ipv4(10, 0, 0, 2);
    private static final int SPORT = 0xC123;

    private final PacketValidator validator = new PacketValidator();
    private final Icrc icrc = new Icrc();

    /** UDP payload of {@code op} with {@code payload} bytes, pad as rxe, ICRC for IPv4 ID 0. */
    private byte[] packet(final int op, final int payload) {
        final int pad = Bth.padFor(payload);
        final int roceLength = Opcode.payloadOffset(op) + payload + pad;
        final UnsafeBuffer b = new UnsafeBuffer(new byte[roceLength + Icrc.LENGTH]);
        new Bth().wrap(b, 0).set(op, false, pad, 0xFFFF, 0x11, true, 0x100);
        for (int i = 0; i < payload; i++) {
            b.putByte(Opcode.payloadOffset(op) + i, (byte) ('A' + i % 26));
        }
        reseal(b.byteArray());
        return b.byteArray();
    }

    /** Recomputes the ICRC after an edit, so only the intended defect remains. */
    private void reseal(final byte[] p) {
        final UnsafeBuffer b = new UnsafeBuffer(p);
        Icrc.put(b, p.length - 4, icrc.computeIpv4(SRC, DST, 0, PacketLayout.IPV4_DF, SPORT, 4791, b, 0,
                p.length - 4));
    }

    private int validate(final byte[] p) {
        return validator.validateIpv4(Ipv4IdMode.STRICT_ID_ZERO, SRC, DST, SPORT, 4791, new UnsafeBuffer(p), 0,
                p.length);
    }

    private int structure(final byte[] p) {
        return validator.validate(new UnsafeBuffer(p), 0, p.length);
    }

    @Test
    void wellFormedPacketsOfEveryOpcodeAreOk() {
        for (final int op : ScapyOracleTest.validOpcodes()) {
            for (final int payload : Opcode.hasPayload(op) ? new int[] {0, 1, 2, 3, 4, 1024} : new int[] {0}) {
                final byte[] p = packet(op, payload);
                assertEquals(PacketValidator.OK, validate(p), Opcode.name(op) + " payload " + payload);
                assertEquals(0, validator.lastIpv4Id());
            }
        }
    }

    @Test
    void everyTruncationIsRejected() {
        for (final int op : ScapyOracleTest.validOpcodes()) {
            final byte[] p = packet(op, Opcode.hasPayload(op) ? 7 : 0);
            for (int n = 0; n < p.length; n++) {
                final byte[] cut = Arrays.copyOf(p, n);
                final int status = validate(cut);
                assertNotEquals(PacketValidator.OK, status, Opcode.name(op) + " cut to " + n);
                if (n < Opcode.payloadOffset(op) + Icrc.LENGTH) {
                    assertEquals(PacketValidator.TRUNCATED, status, Opcode.name(op) + " cut to " + n);
                }
            }
        }
    }

    @Test
    void badLengths() {
        final byte[] send = packet(Opcode.RC_SEND_ONLY, 8);
        // Not a 4-byte multiple: an extra byte (ICRC resealed over the longer packet).
        final byte[] longer = Arrays.copyOf(send, send.length + 1);
        reseal(longer);
        assertEquals(PacketValidator.BAD_LENGTH, validate(longer));
        // Pad count 3 with no payload at all: payload would be -3.
        final byte[] empty = packet(Opcode.RC_SEND_ONLY, 0);
        empty[1] = (byte) 0x30;
        reseal(empty);
        assertEquals(PacketValidator.BAD_LENGTH, validate(empty));
        // Payload on an ACK, pad on an ACK.
        final byte[] ack = packet(Opcode.RC_ACKNOWLEDGE, 0);
        final byte[] fatAck = Arrays.copyOf(ack, ack.length + 4);
        reseal(fatAck);
        assertEquals(PacketValidator.BAD_LENGTH, validate(fatAck));
        ack[1] = (byte) 0x10;
        reseal(ack);
        assertEquals(PacketValidator.BAD_LENGTH, validate(ack));
        // Read request with trailing bytes.
        final byte[] read = packet(Opcode.RC_RDMA_READ_REQUEST, 0);
        final byte[] fatRead = Arrays.copyOf(read, read.length + 8);
        reseal(fatRead);
        assertEquals(PacketValidator.BAD_LENGTH, validate(fatRead));
    }

    @Test
    void unknownOpcodes() {
        for (final int op : new int[] {0x15, 0x18, 0x1C, 0x1D, 0x1F, 0x2C, 0x40, 0x54, 0x60, 0x63, 0x66, 0x80, 0xE0,
                0xFF}) {
            final byte[] p = packet(Opcode.RC_SEND_ONLY, 4);
            p[0] = (byte) op;
            reseal(p);
            assertEquals(PacketValidator.UNKNOWN_OPCODE, validate(p), Opcode.name(op));
        }
        // The ConnectX-4 Lx CNP of vector A (opcode 0x81), its UDP payload alone.
        final byte[] cnp = hex("8100ffff 40000118 00000000" + "00".repeat(16) + "82fd002a");
        assertEquals(PacketValidator.UNKNOWN_OPCODE, structure(cnp));
    }

    @Test
    void badTverAndPkey() {
        final byte[] p = packet(Opcode.RC_SEND_ONLY, 4);
        p[1] = (byte) (p[1] | 1);
        reseal(p);
        assertEquals(PacketValidator.BAD_TVER, validate(p));
        for (final int pkey : new int[] {0x1234, 0x0000, 0x8000, 0xFFFE}) {
            final byte[] q = packet(Opcode.RC_SEND_ONLY, 4);
            q[2] = (byte) (pkey >>> 8);
            q[3] = (byte) pkey;
            reseal(q);
            assertEquals(PacketValidator.BAD_PKEY, validate(q), Integer.toHexString(pkey));
        }
        final byte[] limited = packet(Opcode.RC_SEND_ONLY, 4);
        limited[2] = 0x7F;
        reseal(limited);
        assertEquals(PacketValidator.OK, validate(limited), "0x7FFF matches a full-member 0xFFFF");
        assertEquals(PacketValidator.BAD_PKEY,
                new PacketValidator(0x7FFF).validate(new UnsafeBuffer(limited), 0, limited.length),
                "two limited members do not match");
        assertTrue(PacketValidator.pkeyMatch(0xFFFF, 0xFFFF));
        assertTrue(PacketValidator.pkeyMatch(0x7FFF, 0xFFFF));
        assertFalse(PacketValidator.pkeyMatch(0x7FFF, 0x7FFF));
        assertFalse(PacketValidator.pkeyMatch(0x8000, 0x8000));
    }

    @Test
    void badIcrc() {
        final byte[] p = packet(Opcode.RC_SEND_ONLY, 5);
        p[13] ^= 0x01;
        assertEquals(PacketValidator.OK, structure(p));
        assertEquals(PacketValidator.BAD_ICRC, validate(p));
        p[13] ^= 0x01;
        p[4] ^= (byte) 0xC0; // FECN/BECN: masked, not an error
        assertEquals(PacketValidator.OK, validate(p));
        // Another IPv4 ID: strict mode rejects, recovery finds it.
        final UnsafeBuffer b = new UnsafeBuffer(p);
        Icrc.put(b, p.length - 4, icrc.computeIpv4(SRC, DST, 0x4242, PacketLayout.IPV4_DF, SPORT, 4791, b, 0,
                p.length - 4));
        assertEquals(PacketValidator.BAD_ICRC, validate(p));
        assertEquals(PacketValidator.OK, validator.validateIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, SPORT, 4791, b, 0,
                p.length));
        assertEquals(0x4242, validator.lastIpv4Id());
    }

    @Test
    void ipv6() {
        final byte[] p = packet(Opcode.UD_SEND_ONLY_WITH_IMMEDIATE, 9);
        final UnsafeBuffer b = new UnsafeBuffer(p);
        Icrc.put(b, p.length - 4, icrc.computeIpv6(0xFD00L << 48, 1, 0xFD00L << 48, 2, SPORT, 4791, b, 0,
                p.length - 4));
        assertEquals(PacketValidator.OK, validator.validateIpv6(0xFD00L << 48, 1, 0xFD00L << 48, 2, SPORT, 4791, b,
                0, p.length));
        assertEquals(PacketValidator.BAD_ICRC, validator.validateIpv6(0xFD00L << 48, 1, 0xFD00L << 48, 3, SPORT,
                4791, b, 0, p.length));
    }

    @Test
    void randomBytesNeverThrow() {
        final Random rnd = new Random(10);
        int ok = 0;
        for (int i = 0; i < 50_000; i++) {
            final byte[] p = new byte[rnd.nextInt(120)];
            rnd.nextBytes(p);
            if (rnd.nextBoolean() && p.length > 0) {
                p[0] = (byte) ScapyOracleTest.validOpcodes().get(rnd.nextInt(ScapyOracleTest.validOpcodes().size())).intValue();
            }
            final int status = validator.validateIpv4(Ipv4IdMode.RECOVER_ID, SRC, DST, SPORT, 4791,
                    new UnsafeBuffer(p), 0, p.length);
            assertTrue(status >= 0 && status < PacketStatus.values().length);
            ok += status == PacketValidator.OK ? 1 : 0;
        }
        assertTrue(ok < 5, "random bytes passing structure and a 16-bit ICRC check: " + ok);
    }

    @Test
    void rangeOutsideTheBufferIsTheCallersBug() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[16]);
        assertThrows(IndexOutOfBoundsException.class, () -> validator.validate(b, 8, 9));
        assertThrows(IndexOutOfBoundsException.class, () -> validator.validate(b, -1, 4));
    }

    @Test
    void statusCodesAreTheEnumOrdinals() {
        assertArrayEquals(new int[] {PacketValidator.OK, PacketValidator.TRUNCATED, PacketValidator.BAD_LENGTH,
            PacketValidator.UNKNOWN_OPCODE, PacketValidator.BAD_TVER, PacketValidator.BAD_PKEY,
            PacketValidator.BAD_ICRC}, Arrays.stream(PacketStatus.values()).mapToInt(PacketStatus::code).toArray());
        assertEquals(PacketStatus.BAD_ICRC, PacketStatus.of(PacketValidator.BAD_ICRC));
    }
}
