package io.jhca.benchmarks;

import io.jhca.benchmarks.BareRoce.Mem;
import io.jhca.rxe.wire.Icrc;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.zip.CRC32;

import static io.jhca.benchmarks.BareRoce.BTH;
import static io.jhca.benchmarks.BareRoce.ICRC;
import static io.jhca.benchmarks.BareRoce.OP_WRITE_ONLY;
import static io.jhca.benchmarks.BareRoce.RETH;
import static java.nio.ByteOrder.BIG_ENDIAN;

/**
 * roce_write_lat.c's {@code icrc()}: the ICRC of a RoCE packet in an IPv4 datagram, CRC-32 over the pseudo-header as
 * rxe_icrc.c masks it (TOS, TTL, header checksum, UDP checksum all ones; the BTH's byte 4), then the packet after its
 * BTH. The CRC is {@link CRC32}, HotSpot's intrinsic, as jhca's {@link Icrc} uses, where the C folds by PCLMULQDQ
 * itself; it has no seed argument, so the masked LRH's eight 0xFF bytes are fed every time where the C starts from
 * their CRC. Both take about 20 ns a WRITE's ICRC here. Holds its scratch pseudo-header: one per thread.
 */
final class BareIcrc {
    private static final int LRH_ONES = 8;   // the masked LRH before the pseudo-header

    private final CRC32 crc = new CRC32();
    private final byte[] ph = new byte[LRH_ONES + 20 + 8 + BTH];   // the pseudo-header, after the LRH's ones
    private final UnsafeBuffer phBuf = new UnsafeBuffer(ph);

    BareIcrc() {
        for (int i = 0; i < LRH_ONES; i++) {
            ph[i] = (byte) 0xff;
        }
    }

    /**
     * The ICRC of the packet of len bytes at {@code at} in {@code m} (BTH to the end of the pad), sent from
     * {@code fromIp:fromPort} to {@code toIp:toPort} in an IPv4 datagram with this Identification.
     */
    int compute(int fromIp, int toIp, int fromPort, int toPort, int ipId, Mem m, int at, int len) {
        UnsafeBuffer h = phBuf;
        int udpLen = 8 + len + ICRC;
        int o = LRH_ONES;
        h.putByte(o, (byte) 0x45);
        h.putByte(o + 1, (byte) 0xff);
        h.putShort(o + 2, (short) (20 + udpLen), BIG_ENDIAN);
        h.putShort(o + 4, (short) ipId, BIG_ENDIAN);
        h.putShort(o + 6, (short) 0x4000, BIG_ENDIAN);   // DF
        h.putByte(o + 8, (byte) 0xff);
        h.putByte(o + 9, (byte) 17);
        h.putShort(o + 10, (short) 0xffff, BIG_ENDIAN);
        h.putInt(o + 12, fromIp, BIG_ENDIAN);
        h.putInt(o + 16, toIp, BIG_ENDIAN);
        h.putShort(o + 20, (short) fromPort, BIG_ENDIAN);
        h.putShort(o + 22, (short) toPort, BIG_ENDIAN);
        h.putShort(o + 24, (short) udpLen, BIG_ENDIAN);
        h.putShort(o + 26, (short) 0xffff, BIG_ENDIAN);
        m.buf.getBytes(at, ph, o + 28, BTH);
        ph[o + 28 + 4] = (byte) 0xff;
        CRC32 c = crc;
        c.reset();
        c.update(ph, 0, ph.length);
        ByteBuffer rest = m.crcView;
        rest.limit(at + len).position(at + BTH);
        c.update(rest);
        return (int) c.getValue();
    }

    /**
     * The ICRC of one WRITE Only of 2 bytes, 127.0.0.2:40000 to 127.0.0.1:4791, against jhca's {@link Icrc} and
     * against the C's icrc() for the same bytes (0xbc9c222f with IPv4 ID 0, 0x9e9f913f with ID 1: a first WRITE, its
     * VA fixed at 0x1000 where a run's is a heap address). Throws if they differ.
     */
    static void selfCheck() {
        int clientIp = 0x7f000002;
        int serverIp = 0x7f000001;
        int clientPort = 40000;
        int serverPort = 4791;
        Mem m = new Mem(64);
        UnsafeBuffer p = m.buf;
        int len = BTH + RETH + 2 + 2;
        BareRoce.bth(p, 0, OP_WRITE_ONLY, 2, 0x11, 1, 0xfffff0);
        p.putLong(BTH, 0x1000, BIG_ENDIAN);
        p.putInt(BTH + 8, 0x1101, BIG_ENDIAN);
        p.putInt(BTH + 12, 2, BIG_ENDIAN);
        p.putByte(BTH + RETH + 1, (byte) 1);
        BareIcrc ours = new BareIcrc();
        Icrc jhca = new Icrc();
        int[] c = {0xbc9c222f, 0x9e9f913f};
        for (int id = 0; id < 2; id++) {
            int mine = ours.compute(clientIp, serverIp, clientPort, serverPort, id, m, 0, len);
            int theirs = jhca.computeIpv4(clientIp, serverIp, id, 0x4000, clientPort, serverPort, p, 0, len);
            if (mine != theirs || mine != c[id]) {
                throw new IllegalStateException(String.format("ICRC with IPv4 ID %d: %08x, jhca's Icrc %08x, C %08x",
                        id, mine, theirs, c[id]));
            }
        }
    }
}
