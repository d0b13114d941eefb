package io.jhca.benchmarks;

import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

import static java.nio.ByteOrder.BIG_ENDIAN;
import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * One side of {@code src/main/c/roce_write_lat.c} line for line: an RC QP (requester and responder) with its WQE
 * ring, CQ, MR and send buffer, and the work RoCE RC does on them for ib_write_lat's ping-pong (the C's
 * {@code struct side} and its functions). The client posts a WRITE WQE, its SGE checked against its MR, and sends
 * BTH, RETH, payload, pad and ICRC; the server checks the segment's length, ICRC, BTH version, P_Key, dest QPN and
 * opcode, the WRITE's PSN, rkey, range and length, copies the payload into its MR and holds the ACK, which leaves with
 * its next WRITE as a GSO pair (the WRITE first, the ACK second with IPv4 ID 1); an ACK completes WQEs into the CQ.
 * PSNs start at 0xfffff0 and cross 0.
 *
 * <p>How datagrams leave and arrive is the one thing that differs between the C's two modes, so it is a
 * {@link HandOver}: {@link MemoryHandOver} into the peer's inbox ({@link RoceBareLoopBenchmark}, both sides in one
 * thread), {@link LinkHandOver} by jhca's UDP link ({@link RoceBareWireLat}, a thread per side). Everything else is
 * shared, so the two measure the same code. A side is used by one thread; the only thing it reads of its peer is
 * the peer's MR address and rkey (perftest exchanges them out of band), set before the threads start.
 *
 * <p>Where it differs from the C: see {@link BareIcrc} for the CRC. The C's pointers (an SGE's address, a RETH's VA)
 * are addresses here too, turned into offsets into the MR's buffer once checked against it; Agrona checks the bounds
 * again. A protocol error (local protection, full ring, CQ overrun, a wrong completion) throws where the C exits.
 */
final class BareRoce {
    static final int BTH = 12;
    static final int RETH = 16;
    static final int AETH = 4;
    static final int ICRC = 4;
    static final int ACK_LEN = BTH + AETH + ICRC;
    static final int OP_WRITE_ONLY = 0x0a;   // RC RDMA WRITE Only (IBTA table 38)
    static final int OP_ACK = 0x11;          // RC Acknowledge
    static final int PKEY = 0xffff;
    static final int PSN_MASK = 0xffffff;
    static final int RING = 64;              // send queue and CQ entries, powers of two
    static final int MR_LEN = 4096;
    static final int MTU = 1024;             // single-packet messages
    static final int MAX_PACKET = 2048;

    /**
     * How a side's datagrams leave and arrive: the C's {@code hand_over} and {@code receive}, whose memory and socket
     * branches are the two implementations.
     */
    interface HandOver {
        /**
         * Sends {@code len} bytes at 0 of {@code from} as one datagram, or, if {@code ackLen} is not 0, with the
         * {@code ackLen} bytes at {@code ackAt} as one GSO datagram whose second segment carries IPv4 ID 1.
         */
        void send(Mem from, int len, int ackAt, int ackLen);

        /**
         * One receive call: each segment waiting goes to {@link #onPacket} with the IPv4 ID it carried; returns with
         * nothing done if none is waiting.
         */
        void receive(BareRoce side);
    }

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
        final ByteBuffer bytes;
        final UnsafeBuffer buf;
        final long address;
        final ByteBuffer crcView;

        /** Page-aligned, as the C's aligned_alloc(4096). */
        Mem(int length) {
            this(ByteBuffer.allocateDirect(((length + 4095) & -4096) + 4096).alignedSlice(4096).limit(length).slice());
        }

        /** Over direct bytes allocated elsewhere (a socket's receive slot). */
        Mem(ByteBuffer direct) {
            bytes = direct;
            buf = new UnsafeBuffer(direct);
            address = buf.addressOffset();
            crcView = direct.duplicate();
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

    // the addresses and ports of both ends (the ICRC's pseudo-header)
    final int srcIp;
    final int sport;
    int dstIp;
    int dport;
    final int qpn;
    final int destQpn;
    // requester
    final Wqe[] sq = new Wqe[RING];
    int sqHead;   // posted
    int sqSent;   // transmitted
    int sqTail;   // completed
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
    final BareIcrc icrc = new BareIcrc();   // its own: the sides may run in two threads
    long drops;
    final int size;
    /** The other side: its MR is where this side's WRITEs go. */
    BareRoce peer;
    final HandOver handOver;

    /** open_side: a QP at {@code ip:port}, its MR's lkey and rkey {@code key}, WRITEs of {@code size} bytes. */
    BareRoce(int ip, int port, int qpn, int destQpn, int key, int size, HandOver handOver) {
        if (size < 1 || size > MTU) {
            throw new IllegalArgumentException("size: 1 to " + MTU);
        }
        for (int i = 0; i < RING; i++) {
            sq[i] = new Wqe();
            cq[i] = new Cqe();
        }
        this.srcIp = ip;
        this.sport = port;
        this.qpn = qpn;
        this.destQpn = destQpn;
        this.nextPsn = this.epsn = 0xfffff0;   // the loop crosses 0xFFFFFF -> 0
        this.size = size;
        this.handOver = handOver;
        mr.mem = new Mem(MR_LEN);
        mr.base = mr.mem.address;
        mr.length = MR_LEN;
        mr.lkey = key;
        mr.rkey = key;
    }

    /** pair_up: each side's destination is the other's address and port, and its WRITEs go to the other's MR. */
    static void connect(BareRoce a, BareRoce b) {
        a.dstIp = b.srcIp;
        a.dport = b.sport;
        b.dstIp = a.srcIp;
        b.dport = a.sport;
        a.peer = b;
        b.peer = a;
    }

    /** check_and_close's checks: every packet taken, both PSN spaces in step, every WQE completed. */
    static void check(BareRoce cli, BareRoce srv) {
        if (cli.drops + srv.drops != 0 || cli.epsn != srv.nextPsn || srv.epsn != cli.nextPsn
                || cli.sqTail != cli.sqHead || srv.sqTail != srv.sqHead) {
            throw new IllegalStateException(String.format("%d packets dropped, PSNs %x/%x %x/%x, WQEs %d/%d %d/%d",
                    cli.drops + srv.drops, cli.epsn, srv.nextPsn, srv.epsn, cli.nextPsn, cli.sqTail, cli.sqHead,
                    srv.sqTail, srv.sqHead));
        }
    }

    static void bth(UnsafeBuffer p, int at, int opcode, int pad, int destQpn, int ackReq, int psn) {
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
    private void putAck(int at, int ipId) {
        UnsafeBuffer a = sendBuf.buf;
        bth(a, at, OP_ACK, 0, destQpn, 0, ackPsn);
        a.putInt(at + BTH, 0x1f << 24 | (msn & 0xffffff), BIG_ENDIAN);
        a.putInt(at + BTH + AETH, icrc.compute(srcIp, dstIp, sport, dport, ipId, sendBuf, at, BTH + AETH),
                LITTLE_ENDIAN);   // little-endian, as rxe stores it
        ackHeld = false;
    }

    /** Whether [addr, addr + len) lies inside the MR, with no sum that could wrap. */
    private static boolean mrContains(Mr mr, long addr, int len) {
        long l = len & 0xffffffffL;
        return addr >= mr.base && l <= mr.length && addr - mr.base <= mr.length - l;
    }

    /** ibv_post_send of one signaled RDMA WRITE: a WQE into the ring. Returns 0, or -1 if the ring is full. */
    private int postWrite(long wrId, long laddr, int length, int lkey, long raddr, int rkey) {
        if (sqHead - sqTail == RING) {
            return -1;
        }
        Wqe w = sq[sqHead & (RING - 1)];
        w.wrId = wrId;
        w.laddr = laddr;
        w.length = length;
        w.lkey = lkey;
        w.raddr = raddr;
        w.rkey = rkey;
        sqHead++;
        return 0;
    }

    /** The requester: every posted WQE not yet sent leaves as a WRITE Only, the held ACK (if any) with it. */
    private void transmit() {
        while (sqSent != sqHead) {
            Wqe w = sq[sqSent & (RING - 1)];
            if (w.lkey != mr.lkey || !mrContains(mr, w.laddr, w.length)) {
                throw new IllegalStateException("local protection error");
            }
            int pad = -w.length & 3;
            int len = BTH + RETH + w.length + pad;
            UnsafeBuffer p = sendBuf.buf;
            w.psn = nextPsn;
            bth(p, 0, OP_WRITE_ONLY, pad, destQpn, 1, w.psn);
            nextPsn = (nextPsn + 1) & PSN_MASK;
            long va = w.raddr;
            p.putInt(BTH, (int) (va >>> 32), BIG_ENDIAN);
            p.putInt(BTH + 4, (int) va, BIG_ENDIAN);
            p.putInt(BTH + 8, w.rkey, BIG_ENDIAN);
            p.putInt(BTH + 12, w.length, BIG_ENDIAN);
            p.putBytes(BTH + RETH, mr.mem.buf, (int) (w.laddr - mr.base), w.length);
            p.setMemory(BTH + RETH + w.length, pad, (byte) 0);
            p.putInt(len, icrc.compute(srcIp, dstIp, sport, dport, 0, sendBuf, 0, len), LITTLE_ENDIAN);
            int ackLen = 0;
            if (ackHeld) {
                putAck(len + ICRC, 1);   // the second segment of the GSO datagram
                ackLen = ACK_LEN;
            }
            handOver.send(sendBuf, len + ICRC, len + ICRC, ackLen);
            sqSent++;
        }
    }

    /** Sends a held ACK alone (the end of the run: no request follows to take it). */
    void flushAck() {
        if (!ackHeld) {
            return;
        }
        putAck(0, 0);
        handOver.send(sendBuf, ACK_LEN, 0, 0);
    }

    private static boolean psnAfter(int a, int b) {   // a after b, 24-bit serial arithmetic
        int d = (a - b) & PSN_MASK;
        return d != 0 && d < 0x800000;
    }

    private void onWrite(UnsafeBuffer p, int at, int len, int pad, int psn) {
        if (len < BTH + RETH + pad || psn != epsn) {
            drops++;   // a real responder NAKs a gap and re-ACKs a duplicate; this loop makes neither
            return;
        }
        long va = (long) p.getInt(at + BTH, BIG_ENDIAN) << 32 | (p.getInt(at + BTH + 4, BIG_ENDIAN) & 0xffffffffL);
        int rkey = p.getInt(at + BTH + 8, BIG_ENDIAN);
        int dmaLen = p.getInt(at + BTH + 12, BIG_ENDIAN);
        int payload = len - BTH - RETH - pad;
        if (rkey != mr.rkey || dmaLen != payload || !mrContains(mr, va, dmaLen)) {
            drops++;   // a remote access error NAK in a real responder
            return;
        }
        mr.mem.buf.putBytes((int) (va - mr.base), p, at + BTH + RETH, dmaLen);
        epsn = (epsn + 1) & PSN_MASK;
        msn++;
        ackHeld = true;
        ackPsn = psn;
    }

    private void onAck(UnsafeBuffer p, int at, int len, int psn) {
        if (len != BTH + AETH || (p.getByte(at + BTH) & 0xff) >> 5 != 0) {
            drops++;
            return;
        }
        while (sqTail != sqSent) {
            Wqe w = sq[sqTail & (RING - 1)];
            if (psnAfter(w.psn, psn)) {
                break;
            }
            if (cqHead - cqTail == RING) {
                throw new IllegalStateException("CQ overrun");
            }
            Cqe c = cq[cqHead & (RING - 1)];
            c.wrId = w.wrId;
            c.status = 0;
            c.opcode = 1;   // IBV_WC_RDMA_WRITE
            c.byteLen = w.length;
            c.qpn = qpn;
            cqHead++;
            sqTail++;
        }
    }

    /** One received segment of len bytes at {@code at} in {@code m} that carried this IPv4 Identification. */
    void onPacket(Mem m, int at, int len, int ipId) {
        if (len < BTH + ICRC) {
            drops++;
            return;
        }
        len -= ICRC;
        UnsafeBuffer p = m.buf;
        int got = p.getInt(at + len, LITTLE_ENDIAN);
        if (got != icrc.compute(dstIp, srcIp, dport, sport, ipId, m, at, len)) {
            drops++;
            return;
        }
        int b1 = p.getByte(at + 1);
        int pad = (b1 >> 4) & 3;
        if ((b1 & 0x0f) != 0 || (p.getShort(at + 2, BIG_ENDIAN) & 0xffff) != PKEY || get24(p, at + 5) != qpn) {
            drops++;
            return;
        }
        int psn = get24(p, at + 9);
        int opcode = p.getByte(at) & 0xff;
        if (opcode == OP_WRITE_ONLY) {
            onWrite(p, at, len, pad, psn);
        } else if (opcode == OP_ACK) {
            onAck(p, at, len, psn);
        } else {
            drops++;
        }
    }

    /** The n bytes at 0 of {@code m}: one datagram, or (segment != 0) a GSO datagram's segments, IPv4 IDs 0, 1, ... */
    void onDatagram(Mem m, int n, int segment) {
        if (segment == 0) {
            segment = n;
        }
        int id = 0;
        for (int at = 0; at < n; at += segment, id++) {
            onPacket(m, at, Math.min(n - at, segment), id);
        }
    }

    /** ibv_poll_cq of one entry: 1 and the CQE, or 0. */
    private int pollCq(Cqe out) {
        if (cqTail == cqHead) {
            return 0;
        }
        Cqe c = cq[cqTail & (RING - 1)];
        out.wrId = c.wrId;
        out.byteLen = c.byteLen;
        out.qpn = c.qpn;
        out.status = c.status;
        out.opcode = c.opcode;
        cqTail++;
        return 1;
    }

    /** Polls the send CQ until the last WRITE's completion, receiving meanwhile; checks it. */
    void awaitCompletion(long wrId) {
        Cqe c = polled;
        while (pollCq(c) == 0) {
            handOver.receive(this);
        }
        if (c.status != 0 || c.wrId != wrId || c.byteLen != size) {
            throw new IllegalStateException("completion " + c.wrId + " status " + c.status + ", expected " + wrId);
        }
    }

    /** Waits for the peer's WRITE of iteration i to land: the MR's last written byte becomes the count. */
    void awaitData(long i) {
        while (mr.mem.buf.getByteVolatile(size - 1) != (byte) (i + 1)) {
            handOver.receive(this);
        }
    }

    /** Posts and sends iteration i's WRITE into the peer's MR, its last byte the count. */
    void writeNext(long i) {
        int src = MR_LEN / 2;   // the local buffer: the MR's upper half
        mr.mem.buf.putByte(src + size - 1, (byte) (i + 1));
        if (postWrite(i, mr.base + src, size, mr.lkey, peer.mr.base, peer.mr.rkey) != 0) {
            throw new IllegalStateException("send queue full");
        }
        transmit();
    }
}
