package io.jhca.benchmarks;

import io.jhca.rxe.wire.Icrc;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

import static java.nio.ByteOrder.BIG_ENDIAN;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The C implementation's memory mode ({@code src/main/c/roce_write_lat.c}, {@code run_memory}) line for line in
 * Java: RoCE RC's work for ib_write_lat's ping-pong in the language against C, apart from jhca's structure, which
 * {@link RxeWriteLatBenchmark} {@code -p link=memory} adds. One operation: one round trip of the C loop's body, both
 * sides in this thread, datagrams handed from side to side in memory. The client posts a WRITE WQE, its SGE checked
 * against its MR, and sends BTH, RETH, payload, pad and ICRC; the server checks the segment's length, ICRC (the
 * masked IPv4, UDP and BTH pseudo-header, as rxe_icrc.c), BTH version, P_Key, dest QPN and opcode, the WRITE's PSN,
 * rkey, range and length, copies the payload into its MR and holds the ACK; it sees the last byte change, takes the
 * completion of its previous WRITE (ACKed with this one) and posts its own WRITE, sent with the held ACK (IPv4 ID 1)
 * as a GSO pair in memory, the WRITE first; the client checks and executes both, the ACK completing its WQE into the
 * CQ, and polls the CQ, then the byte. The structures are the C's: a WQE ring, a CQ, an MR, a side per QP; MRs and
 * datagram buffers off-heap ({@link UnsafeBuffer} over direct ByteBuffers), the rest plain fields and arrays. PSNs
 * start at 0xfffff0 and cross 0. Anything out of step throws; the trial's end checks, as the C's does, that no
 * packet was refused and the PSNs and WQEs agree.
 *
 * <p>Where it differs from the C: the CRC is {@link CRC32}, HotSpot's intrinsic, as jhca's {@link Icrc} uses, where
 * the C folds by PCLMULQDQ itself (or by eight tables with {@code ROCE_WRITE_LAT_CRC=tables}); it has no seed
 * argument, so the masked LRH's eight 0xFF bytes are fed every time where the C starts from their CRC. Both take about
 * 20 ns an ICRC here; the rest of the work, not the CRC, is where this loop is slower than the C's (about 395 against
 * 220 ns a round trip). The C's pointers (an SGE's address, a RETH's VA) are addresses here too, turned
 * into offsets into the MR's buffer once checked against it; Agrona checks the bounds again. No sockets are opened
 * (the C's memory mode opens but does not use them), so the ports are fixed, 40000 and 4791, where the C's are
 * ephemeral. An empty inbox throws where the C would spin forever.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class RoceBareLoopBenchmark {
    private static final int BTH = 12;
    private static final int RETH = 16;
    private static final int AETH = 4;
    private static final int ICRC = 4;
    private static final int ACK_LEN = BTH + AETH + ICRC;
    private static final int OP_WRITE_ONLY = 0x0a;   // RC RDMA WRITE Only (IBTA table 38)
    private static final int OP_ACK = 0x11;          // RC Acknowledge
    private static final int PKEY = 0xffff;
    private static final int PSN_MASK = 0xffffff;
    private static final int RING = 64;              // send queue and CQ entries, powers of two
    private static final int MR_LEN = 4096;
    private static final int MTU = 1024;             // single-packet messages
    private static final int MAX_PACKET = 2048;
    private static final int LRH_ONES = 8;           // the masked LRH before the pseudo-header
    private static final int CLIENT_IP = 0x7f000002;
    private static final int SERVER_IP = 0x7f000001;
    private static final int CLIENT_PORT = 40000;
    private static final int SERVER_PORT = 4791;

    @Param({"2"})
    public int size;

    /** struct wqe */
    static final class Wqe {
        long wrId;
        long laddr;
        long raddr;
        int length;
        int lkey;
        int rkey;
        int psn;
    }

    /** struct cqe */
    static final class Cqe {
        long wrId;
        int byteLen;
        int qpn;
        int status;
        int opcode;
    }

    /** Off-heap bytes: the C's pointer (address), Agrona's view, and a ByteBuffer view that CRC32 reads. */
    static final class Mem {
        final UnsafeBuffer buf;
        final long address;
        final ByteBuffer crcView;

        Mem(int length) {
            int pages = (length + 4095) & -4096;   // page-aligned, as the C's aligned_alloc(4096)
            ByteBuffer bytes = ByteBuffer.allocateDirect(pages + 4096).alignedSlice(4096).limit(length).slice();
            buf = new UnsafeBuffer(bytes);
            address = buf.addressOffset();
            crcView = bytes.duplicate();
        }
    }

    /** struct mr */
    static final class Mr {
        Mem mem;
        long base;
        int length;
        int lkey;
        int rkey;
    }

    /** struct side: one QP (requester and responder), its MR, CQ and buffers. */
    static final class Side {
        int srcIp;
        int dstIp;
        int sport;
        int dport;
        int qpn;
        int destQpn;
        // requester
        final Wqe[] sq = new Wqe[RING];
        int sqHead;
        int sqSent;
        int sqTail;
        int nextPsn;
        // responder
        int epsn;
        int msn;
        boolean ackHeld;
        int ackPsn;
        // CQ
        final Cqe[] cq = new Cqe[RING];
        int cqHead;
        int cqTail;
        final Cqe polled = new Cqe();   // await_completion's local struct cqe
        final Mr mr = new Mr();
        final Mem sendBuf = new Mem(MAX_PACKET);
        final Mem recvBuf = new Mem(2 * MAX_PACKET);
        long drops;
        int size;
        Side peer;
        int inboxLen;
        int inboxSegment;

        Side() {
            for (int i = 0; i < RING; i++) {
                sq[i] = new Wqe();
                cq[i] = new Cqe();
            }
        }
    }

    private final CRC32 crc = new CRC32();
    private final byte[] ph = new byte[LRH_ONES + 20 + 8 + BTH];   // icrc()'s pseudo-header, after the LRH's ones
    private final UnsafeBuffer phBuf = new UnsafeBuffer(ph);
    private Side cli;
    private Side srv;
    private long it;

    @Setup(Level.Trial)
    public void setUp() {
        if (size < 1 || size > MTU) {
            throw new IllegalArgumentException("size: 1 to " + MTU);
        }
        for (int i = 0; i < LRH_ONES; i++) {
            ph[i] = (byte) 0xff;
        }
        selfCheck();
        cli = openSide(CLIENT_IP, CLIENT_PORT, 0x12, 0x11, 0x2201);
        srv = openSide(SERVER_IP, SERVER_PORT, 0x11, 0x12, 0x1101);
        cli.dstIp = SERVER_IP;
        cli.dport = SERVER_PORT;
        srv.dstIp = CLIENT_IP;
        srv.dport = CLIENT_PORT;
        cli.peer = srv;
        srv.peer = cli;
        it = 0;
    }

    /** The rest of run_memory after its loop: the client's last ACK to the server, then check_and_close's checks. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (it > 0) {
            flushAck(cli);
            receive(srv);
            awaitCompletion(srv, it - 1);
        }
        if (cli.drops + srv.drops != 0 || cli.epsn != srv.nextPsn || srv.epsn != cli.nextPsn
                || cli.sqTail != cli.sqHead || srv.sqTail != srv.sqHead) {
            throw new IllegalStateException(String.format("%d packets dropped, PSNs %x/%x %x/%x, WQEs %d/%d %d/%d",
                    cli.drops + srv.drops, cli.epsn, srv.nextPsn, srv.epsn, cli.nextPsn, cli.sqTail, cli.sqHead,
                    srv.sqTail, srv.sqHead));
        }
    }

    /** One round trip: run_memory's loop body. */
    @Benchmark
    public long roundTrip() {
        long i = it;
        writeNext(cli, i);
        awaitData(srv, i);   // the WRITE, and the ACK of the server's last one
        if (i > 0) {
            awaitCompletion(srv, i - 1);
        }
        writeNext(srv, i);
        awaitCompletion(cli, i);
        awaitData(cli, i);
        it = i + 1;
        return i;
    }

    private Side openSide(int ip, int port, int qpn, int destQpn, int key) {
        Side s = new Side();
        s.srcIp = ip;
        s.sport = port;
        s.qpn = qpn;
        s.destQpn = destQpn;
        s.nextPsn = s.epsn = 0xfffff0;   // the loop crosses 0xFFFFFF -> 0
        s.size = size;
        s.mr.mem = new Mem(MR_LEN);
        s.mr.base = s.mr.mem.address;
        s.mr.length = MR_LEN;
        s.mr.lkey = key;
        s.mr.rkey = key;
        return s;
    }

    /**
     * The ICRC of a RoCE packet of len bytes at {@code at} (BTH to the end of the pad) in an IPv4 datagram with this
     * Identification: the pseudo-header as rxe_icrc.c masks it, then the packet after its BTH.
     */
    private int icrc(int fromIp, int toIp, int fromPort, int toPort, int ipId, Mem m, int at, int len) {
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

    private static void bth(UnsafeBuffer p, int at, int opcode, int pad, int destQpn, int ackReq, int psn) {
        p.putByte(at, (byte) opcode);
        p.putByte(at + 1, (byte) (pad << 4));   // SE 0, MigReq 0, TVer 0
        p.putShort(at + 2, (short) PKEY, BIG_ENDIAN);
        p.putInt(at + 4, destQpn & 0xffffff, BIG_ENDIAN);
        p.putInt(at + 8, ackReq << 31 | (psn & PSN_MASK), BIG_ENDIAN);
    }

    private static int get24(UnsafeBuffer p, int at) {
        return (p.getByte(at) & 0xff) << 16 | (p.getByte(at + 1) & 0xff) << 8 | (p.getByte(at + 2) & 0xff);
    }

    /** The held ACK at {@code at} in the send buffer: BTH, AETH (ACK, the MSN), ICRC for its datagram's IPv4 ID. */
    private void putAck(Side s, int at, int ipId) {
        UnsafeBuffer a = s.sendBuf.buf;
        bth(a, at, OP_ACK, 0, s.destQpn, 0, s.ackPsn);
        a.putInt(at + BTH, 0x1f << 24 | (s.msn & 0xffffff), BIG_ENDIAN);
        a.putInt(at + BTH + AETH, icrc(s.srcIp, s.dstIp, s.sport, s.dport, ipId, s.sendBuf, at, BTH + AETH),
                LITTLE_ENDIAN);   // little-endian, as rxe stores it
        s.ackHeld = false;
    }

    /** Whether [addr, addr + len) lies inside the MR, with no sum that could wrap. */
    private static boolean mrContains(Mr mr, long addr, int len) {
        long l = len & 0xffffffffL;
        return addr >= mr.base && l <= mr.length && addr - mr.base <= mr.length - l;
    }

    /** One datagram ({@code len1} 0) or a pair, the second at {@code at1}: into the peer's receive buffer. */
    private static void handOver(Side s, Mem from, int len0, int at1, int len1) {
        Side to = s.peer;
        if (to.inboxLen != 0) {
            throw new IllegalStateException("the peer has not taken its last datagram");
        }
        to.recvBuf.buf.putBytes(0, from.buf, 0, len0);
        if (len1 != 0) {
            to.recvBuf.buf.putBytes(len0, from.buf, at1, len1);
        }
        to.inboxLen = len0 + len1;
        to.inboxSegment = len1 != 0 ? len0 : 0;
    }

    /** ibv_post_send of one signaled RDMA WRITE: a WQE into the ring. Returns 0, or -1 if the ring is full. */
    private static int postWrite(Side s, long wrId, long laddr, int length, int lkey, long raddr, int rkey) {
        if (s.sqHead - s.sqTail == RING) {
            return -1;
        }
        Wqe w = s.sq[s.sqHead & (RING - 1)];
        w.wrId = wrId;
        w.laddr = laddr;
        w.length = length;
        w.lkey = lkey;
        w.raddr = raddr;
        w.rkey = rkey;
        s.sqHead++;
        return 0;
    }

    /** The requester: every posted WQE not yet sent leaves as a WRITE Only, the held ACK (if any) with it. */
    private void transmit(Side s) {
        while (s.sqSent != s.sqHead) {
            Wqe w = s.sq[s.sqSent & (RING - 1)];
            if (w.lkey != s.mr.lkey || !mrContains(s.mr, w.laddr, w.length)) {
                throw new IllegalStateException("local protection error");
            }
            int pad = -w.length & 3;
            int len = BTH + RETH + w.length + pad;
            UnsafeBuffer p = s.sendBuf.buf;
            w.psn = s.nextPsn;
            bth(p, 0, OP_WRITE_ONLY, pad, s.destQpn, 1, w.psn);
            s.nextPsn = (s.nextPsn + 1) & PSN_MASK;
            long va = w.raddr;
            p.putInt(BTH, (int) (va >>> 32), BIG_ENDIAN);
            p.putInt(BTH + 4, (int) va, BIG_ENDIAN);
            p.putInt(BTH + 8, w.rkey, BIG_ENDIAN);
            p.putInt(BTH + 12, w.length, BIG_ENDIAN);
            p.putBytes(BTH + RETH, s.mr.mem.buf, (int) (w.laddr - s.mr.base), w.length);
            p.setMemory(BTH + RETH + w.length, pad, (byte) 0);
            p.putInt(len, icrc(s.srcIp, s.dstIp, s.sport, s.dport, 0, s.sendBuf, 0, len), LITTLE_ENDIAN);
            int ackLen = 0;
            if (s.ackHeld) {
                putAck(s, len + ICRC, 1);   // the second segment of the GSO datagram
                ackLen = ACK_LEN;
            }
            handOver(s, s.sendBuf, len + ICRC, len + ICRC, ackLen);
            s.sqSent++;
        }
    }

    /** Sends a held ACK alone (the end of the run: no request follows to take it). */
    private void flushAck(Side s) {
        if (!s.ackHeld) {
            return;
        }
        putAck(s, 0, 0);
        handOver(s, s.sendBuf, ACK_LEN, 0, 0);
    }

    private static boolean psnAfter(int a, int b) {   // a after b, 24-bit serial arithmetic
        int d = (a - b) & PSN_MASK;
        return d != 0 && d < 0x800000;
    }

    private static void onWrite(Side s, UnsafeBuffer p, int at, int len, int pad, int psn) {
        if (len < BTH + RETH + pad || psn != s.epsn) {
            s.drops++;   // a real responder NAKs a gap and re-ACKs a duplicate; this loop makes neither
            return;
        }
        long va = (long) p.getInt(at + BTH, BIG_ENDIAN) << 32 | (p.getInt(at + BTH + 4, BIG_ENDIAN) & 0xffffffffL);
        int rkey = p.getInt(at + BTH + 8, BIG_ENDIAN);
        int dmaLen = p.getInt(at + BTH + 12, BIG_ENDIAN);
        int payload = len - BTH - RETH - pad;
        if (rkey != s.mr.rkey || dmaLen != payload || !mrContains(s.mr, va, dmaLen)) {
            s.drops++;   // a remote access error NAK in a real responder
            return;
        }
        s.mr.mem.buf.putBytes((int) (va - s.mr.base), p, at + BTH + RETH, dmaLen);
        s.epsn = (s.epsn + 1) & PSN_MASK;
        s.msn++;
        s.ackHeld = true;
        s.ackPsn = psn;
    }

    private static void onAck(Side s, UnsafeBuffer p, int at, int len, int psn) {
        if (len != BTH + AETH || (p.getByte(at + BTH) & 0xff) >> 5 != 0) {
            s.drops++;
            return;
        }
        while (s.sqTail != s.sqSent) {
            Wqe w = s.sq[s.sqTail & (RING - 1)];
            if (psnAfter(w.psn, psn)) {
                break;
            }
            if (s.cqHead - s.cqTail == RING) {
                throw new IllegalStateException("CQ overrun");
            }
            Cqe c = s.cq[s.cqHead & (RING - 1)];
            c.wrId = w.wrId;
            c.status = 0;
            c.opcode = 1;   // IBV_WC_RDMA_WRITE
            c.byteLen = w.length;
            c.qpn = s.qpn;
            s.cqHead++;
            s.sqTail++;
        }
    }

    /** One received segment of len bytes at {@code at} that carried this IPv4 Identification. */
    private void onPacket(Side s, Mem m, int at, int len, int ipId) {
        if (len < BTH + ICRC) {
            s.drops++;
            return;
        }
        len -= ICRC;
        UnsafeBuffer p = m.buf;
        int got = p.getInt(at + len, LITTLE_ENDIAN);
        if (got != icrc(s.dstIp, s.srcIp, s.dport, s.sport, ipId, m, at, len)) {
            s.drops++;
            return;
        }
        int b1 = p.getByte(at + 1);
        int pad = (b1 >> 4) & 3;
        if ((b1 & 0x0f) != 0 || (p.getShort(at + 2, BIG_ENDIAN) & 0xffff) != PKEY || get24(p, at + 5) != s.qpn) {
            s.drops++;
            return;
        }
        int psn = get24(p, at + 9);
        int opcode = p.getByte(at) & 0xff;
        if (opcode == OP_WRITE_ONLY) {
            onWrite(s, p, at, len, pad, psn);
        } else if (opcode == OP_ACK) {
            onAck(s, p, at, len, psn);
        } else {
            s.drops++;
        }
    }

    /** The n bytes in the receive buffer: one datagram, or (segment != 0) a pair's segments in order. */
    private void onDatagram(Side s, int n, int segment) {
        if (segment == 0) {
            segment = n;
        }
        int id = 0;
        for (int at = 0; at < n; at += segment, id++) {
            onPacket(s, s.recvBuf, at, Math.min(n - at, segment), id);
        }
    }

    /** The memory mode's receive: the inbox's datagram, segments numbered 0, 1 as the kernel numbers them. */
    private void receive(Side s) {
        int n = s.inboxLen;
        if (n == 0) {
            throw new IllegalStateException("nothing to receive: the loop is out of step");
        }
        s.inboxLen = 0;
        onDatagram(s, n, s.inboxSegment);
    }

    /** ibv_poll_cq of one entry: 1 and the CQE, or 0. */
    private static int pollCq(Side s, Cqe out) {
        if (s.cqTail == s.cqHead) {
            return 0;
        }
        Cqe c = s.cq[s.cqTail & (RING - 1)];
        out.wrId = c.wrId;
        out.byteLen = c.byteLen;
        out.qpn = c.qpn;
        out.status = c.status;
        out.opcode = c.opcode;
        s.cqTail++;
        return 1;
    }

    /** Polls the send CQ until the last WRITE's completion, receiving meanwhile; checks it. */
    private void awaitCompletion(Side s, long wrId) {
        Cqe c = s.polled;
        while (pollCq(s, c) == 0) {
            receive(s);
        }
        if (c.status != 0 || c.wrId != wrId || c.byteLen != s.size) {
            throw new IllegalStateException("completion " + c.wrId + " status " + c.status + ", expected " + wrId);
        }
    }

    /** Waits for the peer's WRITE of iteration i to land: the MR's last written byte becomes the count. */
    private void awaitData(Side s, long i) {
        while (s.mr.mem.buf.getByteVolatile(s.size - 1) != (byte) (i + 1)) {
            receive(s);
        }
    }

    /** Posts and sends iteration i's WRITE into the peer's MR, its last byte the count. */
    private void writeNext(Side s, long i) {
        int src = MR_LEN / 2;   // the local buffer: the MR's upper half
        s.mr.mem.buf.putByte(src + s.size - 1, (byte) (i + 1));
        if (postWrite(s, i, s.mr.base + src, s.size, s.mr.lkey, s.peer.mr.base, s.peer.mr.rkey) != 0) {
            throw new IllegalStateException("send queue full");
        }
        transmit(s);
    }

    /**
     * The ICRC of one WRITE Only of 2 bytes, 127.0.0.2:40000 to 127.0.0.1:4791, against jhca's {@link Icrc} and
     * against the C's icrc() for the same bytes (0xbc9c222f with IPv4 ID 0, 0x9e9f913f with ID 1: the loop's first
     * WRITE, its VA fixed at 0x1000 where the loop's is a heap address).
     */
    private void selfCheck() {
        Mem m = new Mem(64);
        UnsafeBuffer p = m.buf;
        int len = BTH + RETH + 2 + 2;
        bth(p, 0, OP_WRITE_ONLY, 2, 0x11, 1, 0xfffff0);
        p.putLong(BTH, 0x1000, BIG_ENDIAN);
        p.putInt(BTH + 8, 0x1101, BIG_ENDIAN);
        p.putInt(BTH + 12, 2, BIG_ENDIAN);
        p.putByte(BTH + RETH + 1, (byte) 1);
        Icrc jhca = new Icrc();
        int[] c = {0xbc9c222f, 0x9e9f913f};
        for (int id = 0; id < 2; id++) {
            int ours = icrc(CLIENT_IP, SERVER_IP, CLIENT_PORT, SERVER_PORT, id, m, 0, len);
            int theirs = jhca.computeIpv4(CLIENT_IP, SERVER_IP, id, 0x4000, CLIENT_PORT, SERVER_PORT, p, 0, len);
            if (ours != theirs || ours != c[id]) {
                throw new IllegalStateException(String.format("ICRC with IPv4 ID %d: %08x, jhca's Icrc %08x, C %08x",
                        id, ours, theirs, c[id]));
            }
        }
    }
}
