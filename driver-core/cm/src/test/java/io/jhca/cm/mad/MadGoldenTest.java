package io.jhca.cm.mad;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HexFormat;

import org.junit.jupiter.api.Test;

/**
 * Every CM message's bytes against golden images written here byte by byte from the IBTA layouts (vol 1 Tables
 * 106-113; the MAD header of 13.4.2), independent of the codec's field table: a wrong offset, bit position or
 * width shows as a differing byte, named by its offset.
 */
class MadGoldenTest {
    static final long TID = 0x0102030405060708L;

    /** A MAD image with the CM header; {@code at} puts big-endian values at absolute offsets. */
    static final class Image {
        final byte[] b = new byte[256];

        Image(int attr) {
            b[0] = 1;
            b[1] = 7;
            b[2] = 2;
            b[3] = 3;
            put(8, 8, TID);
            put(16, 2, attr);
        }

        Image put(int at, int n, long v) {
            for (int i = n - 1; i >= 0; i--) {
                b[at + i] = (byte) v;
                v >>>= 8;
            }
            return this;
        }

        Image bytes(int at, byte[] v) {
            System.arraycopy(v, 0, b, at, v.length);
            return this;
        }
    }

    static void same(byte[] expected, Mad actual) {
        byte[] a = actual.bytes();
        for (int i = 0; i < 256; i++) {
            if (expected[i] != a[i]) {
                throw new AssertionError(String.format("byte %d: expected %02x, got %02x%nexpected %s%nactual   %s", i,
                        expected[i] & 0xFF, a[i] & 0xFF, HexFormat.of().formatHex(expected), HexFormat.of().formatHex(a)));
            }
        }
    }

    static byte[] seq(int n, int from) {
        byte[] r = new byte[n];
        for (int i = 0; i < n; i++) {
            r[i] = (byte) (from + i);
        }
        return r;
    }

    static final byte[] LGID = seq(16, 0x40);
    static final byte[] RGID = seq(16, 0x60);

    static ReqMessage sampleReq() {
        return new ReqMessage(0x11223344, 0x0000000001061CE6L, 0x1112131415161718L, 0xABCDEF, 5, 6, 0x14, 1, 0x123456,
                0x13, 6, 0xFFFF, 5, 7, 15, true, 0xFFFF, 0xFFFE, LGID, RGID, 0xABCDE, 3, 0x20, 64, 5, true, 18,
                seq(92, 0x80));
    }

    @Test
    void req() {
        Image g = new Image(0x0010).put(24, 4, 0x11223344).put(32, 8, 0x0000000001061CE6L)
                .put(40, 8, 0x1112131415161718L).put(56, 3, 0xABCDEF).put(59, 1, 5).put(63, 1, 6)
                .put(67, 1, 0x14 << 3 | 1 << 1) // RemoteCMResponseTimeout(5) TransportServiceType(2) E2E(1)
                .put(68, 3, 0x123456).put(71, 1, 0x13 << 3 | 6) // LocalCMResponseTimeout(5) RetryCount(3)
                .put(72, 2, 0xFFFF).put(74, 1, 5 << 4 | 7) // MTU(4) RDCExists(1) RNRRetryCount(3)
                .put(75, 1, 15 << 4 | 1 << 3) // MaxCMRetries(4) SRQ(1) ExtendedTransport(3)
                .put(76, 2, 0xFFFF).put(78, 2, 0xFFFE).bytes(80, LGID).bytes(96, RGID)
                .put(112, 4, 0xABCDEL << 12 | 3) // FlowLabel(20) reserved(6) PacketRate(6)
                .put(116, 1, 0x20).put(117, 1, 64).put(118, 1, 5 << 4 | 1 << 3).put(119, 1, 18 << 3)
                .bytes(164, seq(92, 0x80));
        same(g.b, sampleReq().encode(TID));
        ReqMessage back = ReqMessage.decode(sampleReq().encode(TID));
        assertEquals(sampleReq().toString().replaceAll("\\[B@\\w+", ""), back.toString().replaceAll("\\[B@\\w+", ""));
        assertArrayEquals(LGID, back.primaryLocalGid());
        assertArrayEquals(seq(92, 0x80), back.privateData());
    }

    @Test
    void rep() {
        RepMessage r = new RepMessage(0x01020304, 0x05060708, 0x0A0B0C0D, 0x123456, 0x654321, 4, 3, 0x1F, 2, true,
                6, true, 0x2122232425262728L, seq(196, 0x10));
        Image g = new Image(0x0013).put(24, 4, 0x01020304).put(28, 4, 0x05060708).put(32, 4, 0x0A0B0C0D)
                .put(36, 3, 0x123456).put(44, 3, 0x654321).put(48, 1, 4).put(49, 1, 3)
                .put(50, 1, 0x1F << 3 | 2 << 1 | 1) // TargetACKDelay(5) FailoverAccepted(2) E2E(1)
                .put(51, 1, 6 << 5 | 1 << 4) // RNRRetryCount(3) SRQ(1)
                .put(52, 8, 0x2122232425262728L).bytes(60, seq(196, 0x10));
        same(g.b, r.encode(TID));
        assertEquals(0x654321, RepMessage.decode(r.encode(TID)).startingPsn());
    }

    @Test
    void mra() {
        Image g = new Image(0x0011).put(24, 4, 0xAABBCCDDL).put(28, 4, 0x11223344).put(32, 1, 1 << 6)
                .put(33, 1, 0x17 << 3).bytes(34, seq(222, 1));
        same(g.b, ShortMessages.mra(TID, 0xAABBCCDD, 0x11223344, CmMessages.MSG_REP, 0x17, seq(222, 1)));
    }

    @Test
    void rej() {
        byte[] ari = seq(72, 0x30);
        Image g = new Image(0x0012).put(24, 4, 1).put(28, 4, 2).put(32, 1, 2 << 6).put(33, 1, 72 << 1)
                .put(34, 2, 28).bytes(36, ari).bytes(108, seq(148, 0x50));
        same(g.b, ShortMessages.rej(TID, 1, 2, CmMessages.MSG_OTHER, RejectReason.CONSUMER_DEFINED, ari,
                seq(148, 0x50)));
    }

    @Test
    void rtuDreqDrep() {
        same(new Image(0x0014).put(24, 4, 7).put(28, 4, 8).bytes(32, seq(224, 2)).b,
                ShortMessages.rtu(TID, 7, 8, seq(224, 2)));
        same(new Image(0x0015).put(24, 4, 7).put(28, 4, 8).put(32, 3, 0xFEDCBA).bytes(36, seq(220, 3)).b,
                ShortMessages.dreq(TID, 7, 8, 0xFEDCBA, seq(220, 3)));
        same(new Image(0x0016).put(24, 4, 7).put(28, 4, 8).bytes(32, seq(224, 4)).b,
                ShortMessages.drep(TID, 7, 8, seq(224, 4)));
    }

    @Test
    void cmaHeaderAndServiceId() throws Exception {
        CmaHeader h = new CmaHeader(new InetSocketAddress(InetAddress.getByName("10.88.0.1"), 0x8291),
                new InetSocketAddress(InetAddress.getByName("10.88.0.2"), 7174));
        byte[] e = new byte[36];
        e[1] = 0x40;
        e[2] = (byte) 0x82;
        e[3] = (byte) 0x91;
        System.arraycopy(new byte[] {10, 88, 0, 1}, 0, e, 16, 4);
        System.arraycopy(new byte[] {10, 88, 0, 2}, 0, e, 32, 4);
        assertArrayEquals(e, h.encode());
        assertEquals(h, CmaHeader.decode(e, 7174));
        assertEquals(0x0000000001061C06L, CmaHeader.serviceId(7174));
        assertEquals(7174, CmaHeader.portOf(0x0000000001061C06L));
        assertEquals(-1, CmaHeader.portOf(0x0000000001111C06L));
    }

    @Test
    void badInputIsRefusedNamingTheProblem() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> Mad.cm(0x10, 0).set(CmMessages.Req.LOCAL_QPN, 1 << 24));
        assertTrue(e.getMessage().contains("LocalQPN"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> Mad.wrap(new byte[100], 0, 100));
        assertTrue(e.getMessage().contains("256"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> ShortMessages.rtu(0, 1, 2, new byte[225]));
        assertTrue(e.getMessage().contains("RTU private data"), e.getMessage());
        byte[] bad = new byte[36];
        bad[0] = 1;
        e = assertThrows(IllegalArgumentException.class, () -> CmaHeader.decode(bad, 1));
        assertTrue(e.getMessage().contains("version"), e.getMessage());
    }
}
