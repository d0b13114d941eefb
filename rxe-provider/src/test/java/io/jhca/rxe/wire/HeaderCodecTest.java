package io.jhca.rxe.wire;

import static io.jhca.rxe.wire.TestSupport.hex;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.Arrays;
import java.util.List;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

/** Header flyweights: exact bytes at field edges, neighbours untouched, range and read-only checks. */
class HeaderCodecTest {

    private static byte[] bytes(final UnsafeBuffer b, final int offset, final int length) {
        final byte[] out = new byte[length];
        b.getBytes(offset, out);
        return out;
    }

    @Test
    void bthAllFieldsAtTheirEdges() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[Bth.LENGTH]);
        final Bth bth = new Bth().wrap(b, 0);
        bth.opcode(0xFF).se(true).migReq(true).padCnt(3).tVer(15).pkey(0x8001).fecn(true).becn(true)
                .destQp(0xFFFFFF).ackReq(true).resv7(0x7F).psn(0xFFFFFF);
        bth.fecnBecnByte(bth.fecnBecnByte() | 0x3F);
        assertArrayEquals(hex("ff ff 8001 ff ffffff ff ffffff"), b.byteArray());
        // Clearing one field at a time leaves its neighbours alone.
        bth.se(false);
        assertEquals(0x7F, b.getByte(1) & 0xFF);
        bth.migReq(false).padCnt(0);
        assertEquals(0x0F, b.getByte(1) & 0xFF);
        bth.tVer(0);
        assertEquals(0, b.getByte(1));
        bth.destQp(0);
        assertEquals(0xFF, b.getByte(4) & 0xFF, "byte 4 kept");
        bth.psn(0);
        assertEquals(0xFF, b.getByte(8) & 0xFF, "AckReq/resv7 kept");
        bth.ackReq(false);
        assertEquals(0x7F, bth.resv7());
        bth.resv7(0).fecn(false).becn(false);
        assertEquals(0x3F, bth.fecnBecnByte());
        assertFalse(bth.fecn() || bth.becn());
        bth.destQp(0xABCDEF).psn(Psn.next(0xFFFFFF));
        assertArrayEquals(hex("ff 00 8001 3f abcdef 00 000000"), b.byteArray());
    }

    @Test
    void bthDecodesVectorC() {
        final UnsafeBuffer b = new UnsafeBuffer(hex("0430ffff0000001180000100"));
        final Bth bth = new Bth().wrap(b, 0);
        assertEquals(Opcode.RC_SEND_ONLY, bth.opcode());
        assertFalse(bth.se());
        assertFalse(bth.migReq());
        assertEquals(3, bth.padCnt());
        assertEquals(0, bth.tVer());
        assertEquals(0xFFFF, bth.pkey());
        assertEquals(0, bth.fecnBecnByte());
        assertEquals(0x11, bth.destQp());
        assertTrue(bth.ackReq());
        assertEquals(0, bth.resv7());
        assertEquals(0x100, bth.psn());
        // set() writes the same 12 bytes from scratch over garbage.
        final UnsafeBuffer c = new UnsafeBuffer(new byte[12]);
        c.setMemory(0, 12, (byte) 0x5A);
        new Bth().wrap(c, 0).set(Opcode.RC_SEND_ONLY, false, Bth.padFor(5), 0xFFFF, 0x11, true, 0x100);
        assertArrayEquals(b.byteArray(), c.byteArray());
        assertEquals(List.of(0, 3, 2, 1, 0), List.of(Bth.padFor(0), Bth.padFor(1), Bth.padFor(2), Bth.padFor(3),
                Bth.padFor(4096)));
    }

    @Test
    void bthRejectsOutOfRangeValues() {
        final Bth bth = new Bth().wrap(new UnsafeBuffer(new byte[12]), 0);
        assertThrows(IllegalArgumentException.class, () -> bth.destQp(1 << 24));
        assertThrows(IllegalArgumentException.class, () -> bth.psn(-1));
        assertThrows(IllegalArgumentException.class, () -> bth.padCnt(4));
        assertThrows(IllegalArgumentException.class, () -> bth.tVer(16));
        assertThrows(IllegalArgumentException.class, () -> bth.pkey(0x10000));
        assertThrows(IllegalArgumentException.class, () -> bth.opcode(256));
        assertThrows(IllegalArgumentException.class, () -> bth.resv7(0x80));
    }

    @Test
    void bthSetWritesWhatTheSettersWriteAtEveryEdge() {
        final int[][] cases = {
            {0xFF, 1, 3, 0xFFFF, 0xFFFFFF, 1, 0xFFFFFF},
            {0, 0, 0, 0, 0, 0, 0},
            {0x0A, 1, 0, 0x8001, 0x800000, 0, 0x7FFFFF},
            {0x11, 0, 2, 0x7FFF, 1, 1, 1},
        };
        for (final int[] c : cases) {
            final UnsafeBuffer bySet = new UnsafeBuffer(new byte[Bth.LENGTH + 2]);
            bySet.setMemory(0, Bth.LENGTH + 2, (byte) 0xA5);
            new Bth().wrap(bySet, 1).set(c[0], c[1] == 1, c[2], c[3], c[4], c[5] == 1, c[6]);
            final UnsafeBuffer bySetters = new UnsafeBuffer(new byte[Bth.LENGTH + 2]);
            bySetters.setMemory(0, Bth.LENGTH + 2, (byte) 0xA5);
            new Bth().wrap(bySetters, 1).clear().opcode(c[0]).se(c[1] == 1).padCnt(c[2]).pkey(c[3]).destQp(c[4])
                    .ackReq(c[5] == 1).psn(c[6]);
            assertArrayEquals(bySetters.byteArray(), bySet.byteArray(), Arrays.toString(c));
        }
    }

    @Test
    void bthSetRefusesAnOutOfRangeFieldAndWritesNothing() {
        final int[][] bad = {
            {0x100, 0, 0xFFFF, 1, 1}, {-1, 0, 0xFFFF, 1, 1}, {0x0A, 4, 0xFFFF, 1, 1}, {0x0A, -1, 0xFFFF, 1, 1},
            {0x0A, 0, 0x10000, 1, 1}, {0x0A, 0, 0xFFFF, 1 << 24, 1}, {0x0A, 0, 0xFFFF, -1, 1},
            {0x0A, 0, 0xFFFF, 1, 1 << 24}, {0x0A, 0, 0xFFFF, 1, -1},
        };
        for (final int[] c : bad) {
            final UnsafeBuffer b = new UnsafeBuffer(new byte[Bth.LENGTH]);
            b.setMemory(0, Bth.LENGTH, (byte) 0x5A);
            final Bth bth = new Bth().wrap(b, 0);
            assertThrows(IllegalArgumentException.class, () -> bth.set(c[0], false, c[1], c[2], c[3], true, c[4]),
                    Arrays.toString(c));
            for (int i = 0; i < Bth.LENGTH; i++) {
                assertEquals(0x5A, b.getByte(i) & 0xFF, "byte " + i + " of " + Arrays.toString(c));
            }
        }
    }

    @Test
    void extensionHeadersByteExact() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[64]);
        new Reth().wrap(b, 1).set(0x8000000000000001L, 0xFFFFFFFF, 0xFFFFFFFF);
        assertArrayEquals(hex("8000000000000001 ffffffff ffffffff"), bytes(b, 1, 16));
        final Reth reth = new Reth().wrap(b, 1);
        assertEquals(0x8000000000000001L, reth.va());
        assertEquals(0xFFFFFFFF, reth.rkey());
        assertEquals(0xFFFF_FFFFL, reth.dmaLengthUnsigned());

        // AtomicETH at an odd offset: its 64-bit fields are unaligned.
        final AtomicEth atomic = new AtomicEth().wrap(b, 3).set(0x0102030405060708L, 0x11223344,
                0xA1A2A3A4A5A6A7A8L, 0xB1B2B3B4B5B6B7B8L);
        assertArrayEquals(hex("0102030405060708 11223344 a1a2a3a4a5a6a7a8 b1b2b3b4b5b6b7b8"), bytes(b, 3, 28));
        assertEquals(0xA1A2A3A4A5A6A7A8L, atomic.swapAdd());
        assertEquals(0xB1B2B3B4B5B6B7B8L, atomic.compare());
        assertEquals(0x11223344, atomic.rkey());
        assertEquals(0x0102030405060708L, atomic.va());

        final AtomicAckEth ack = new AtomicAckEth().wrap(b, 5).origRemoteData(0xFEDCBA9876543210L);
        assertArrayEquals(hex("fedcba9876543210"), bytes(b, 5, 8));
        assertEquals(0xFEDCBA9876543210L, ack.origRemoteData());

        final ImmDt imm = new ImmDt().wrap(b, 2).immediate(0xDEADBEEF);
        assertArrayEquals(hex("deadbeef"), bytes(b, 2, 4), "network order");
        assertEquals(0xDEADBEEF, imm.immediate());

        b.setMemory(0, 16, (byte) 0xEE);
        final Deth deth = new Deth().wrap(b, 0).set(Deth.GSI_QKEY, 0xABCDEF);
        assertArrayEquals(hex("80010000 00 abcdef"), bytes(b, 0, 8), "reserved byte zeroed");
        assertEquals(Deth.GSI_QKEY, deth.qkey());
        assertEquals(0xABCDEF, deth.srcQp());
        deth.srcQp(1);
        assertEquals(Deth.GSI_QKEY, deth.qkey());
        assertThrows(IllegalArgumentException.class, () -> deth.srcQp(0x1000000));

        final Ieth ieth = new Ieth().wrap(b, 9).rkey(0x0A0B0C0D);
        assertArrayEquals(hex("0a0b0c0d"), bytes(b, 9, 4));
        assertEquals(0x0A0B0C0D, ieth.rkey());
        ieth.clear();
        assertArrayEquals(new byte[4], bytes(b, 9, 4));
    }

    @Test
    void aethSyndromesAndMsn() {
        final UnsafeBuffer b = new UnsafeBuffer(new byte[4]);
        final Aeth aeth = new Aeth().wrap(b, 0).set(Aeth.nakSyndrome(Aeth.NAK_REMOTE_OPERATIONAL_ERROR), 0xFFFFFF);
        assertArrayEquals(hex("63ffffff"), b.byteArray());
        assertTrue(aeth.isNak());
        assertEquals(Aeth.NAK_REMOTE_OPERATIONAL_ERROR, aeth.value());
        aeth.msn(0);
        assertEquals(0x63, aeth.syndrome(), "syndrome kept");
        aeth.syndrome(Aeth.SYNDROME_ACK).msn(1);
        assertArrayEquals(hex("1f000001"), b.byteArray(), "rxe's ACK, vector D");
        assertTrue(aeth.isAck());
        assertEquals(Aeth.CREDITS_UNLIMITED, aeth.value());
        aeth.syndrome(Aeth.rnrNakSyndrome(14));
        assertEquals(0x2E, aeth.syndrome(), "tshark: RNR Nak, Timer 1.28 ms (14)");
        assertTrue(aeth.isRnrNak());
        assertEquals(14, aeth.value());
        assertEquals(1_280_000L, RnrTimer.nanos(aeth.value()));
        assertEquals(0x60, Aeth.nakSyndrome(Aeth.NAK_PSN_SEQUENCE_ERROR));
        assertEquals(0x61, Aeth.nakSyndrome(Aeth.NAK_INVALID_REQUEST));
        assertEquals(0x62, Aeth.nakSyndrome(Aeth.NAK_REMOTE_ACCESS_ERROR));
        assertEquals(0x00, Aeth.ackSyndrome(0));
        assertEquals(Aeth.TYPE_RESERVED, Aeth.type(0x40));
        assertThrows(IllegalArgumentException.class, () -> Aeth.rnrNakSyndrome(32));
        assertThrows(IllegalArgumentException.class, () -> aeth.msn(1 << 24));
        // set() writes the whole word, over garbage too, and refuses a field out of range without writing
        b.setMemory(0, 4, (byte) 0x5A);
        aeth.set(Aeth.SYNDROME_ACK, 0x800001);
        assertArrayEquals(hex("1f800001"), b.byteArray());
        aeth.set(0, 0);
        assertArrayEquals(hex("00000000"), b.byteArray());
        for (final int[] bad : new int[][] {{0x100, 1}, {-1, 1}, {0x1F, 1 << 24}, {0x1F, -1}}) {
            assertThrows(IllegalArgumentException.class, () -> aeth.set(bad[0], bad[1]), Arrays.toString(bad));
            assertArrayEquals(hex("00000000"), b.byteArray(), Arrays.toString(bad));
        }
    }

    @Test
    void lengthsAndRangeChecks() {
        assertEquals(List.of(12, 16, 4, 28, 8, 4, 8, 4), List.of(new Bth().length(), new Reth().length(),
                new Aeth().length(), new AtomicEth().length(), new AtomicAckEth().length(), new ImmDt().length(),
                new Deth().length(), new Ieth().length()));
        final UnsafeBuffer b = new UnsafeBuffer(new byte[40]);
        assertThrows(IndexOutOfBoundsException.class, () -> new Bth().wrap(b, 29));
        assertThrows(IndexOutOfBoundsException.class, () -> new AtomicEth().wrap(b, 13));
        assertThrows(IndexOutOfBoundsException.class, () -> new Reth().wrap(b, -1));
        new Bth().wrap(b, 28);
        new AtomicEth().wrap(b, 12);
    }

    /** A DirectBuffer that is not a MutableDirectBuffer, as a read-only receive ring might hand out. */
    private static DirectBuffer readOnly(final UnsafeBuffer delegate) {
        return (DirectBuffer) Proxy.newProxyInstance(DirectBuffer.class.getClassLoader(),
                new Class<?>[] {DirectBuffer.class}, (proxy, method, args) -> {
                    try {
                        return method.invoke(delegate, args);
                    } catch (final InvocationTargetException e) {
                        throw e.getCause();
                    }
                });
    }

    @Test
    void readOnlyWrapReadsButDoesNotWrite() {
        final UnsafeBuffer b = new UnsafeBuffer(hex("0430ffff0000001180000100"));
        final Bth bth = new Bth().wrap(readOnly(b), 0);
        assertEquals(0x11, bth.destQp());
        assertEquals(0x100, bth.psn());
        assertThrows(IllegalStateException.class, () -> bth.psn(1));
        assertThrows(IllegalStateException.class, bth::clear);
        assertEquals(0x100, bth.wrap(b, 0).psn(0x100).psn(), "writable again once wrapped mutable");
    }
}
