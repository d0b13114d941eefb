package io.jhca.mlx5.testdev;

import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cq.Cqe64;
import io.jhca.mlx5.cq.CqeOpcode;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.mlx5.cq.ErrCqe;
import io.jhca.mlx5.wqe.AtomicSeg;
import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.DatagramSeg;
import io.jhca.mlx5.wqe.FmCeSe;
import io.jhca.mlx5.wqe.InlineSeg;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.mlx5.wqe.RaddrSeg;
import io.jhca.mlx5.wqe.RecvWqeLayout;
import io.jhca.mlx5.wqe.SendWqeLayout;

/**
 * A test stand-in for the ConnectX data path, not the device model: it reads each QP's doorbell record, executes
 * the new send WQEs between QPs of the same process (SEND, SEND_IMM, RDMA WRITE (+IMM), READ, the two atomics) by
 * plain memory copies at the addresses the WQEs name (identity IOVAs, no key checks), consumes receive WQEs and
 * writes CQEs with the owner bit of the producer's wrap parity, body first and op_own last. Everything it reads it
 * reads the way hardware must: the 16-bit counters of the doorbell records, control segments, WQEs that continue at
 * slot 0. Driven by the test thread ({@link #process()}); no threads.
 *
 * <p>It touches only memory its {@link Reach} says the device may reach (what the function handed out or mapped),
 * and checks every address and length a WQE names before copying: a bad one ends as an error CQE (LOCAL_PROT_ERR,
 * REMOTE_ACCESS_ERR, LOCAL_LENGTH_ERR) and the QP in error, as on hardware, never as a raw access to stray memory.
 */
public final class LoopbackEngine {

    /** Which host ranges the device may touch (identity IOVAs: the address is the host address). */
    @FunctionalInterface
    public interface Reach {
        boolean reachable(long address, long length);
    }

    /** Thrown for a ring or doorbell record outside reachable memory at creation: the test is wrong, not the WQE. */
    private static void requireReachable(Reach reach, String what, long address, long length) {
        if (!reachableRange(reach, address, length)) {
            throw new IllegalArgumentException(String.format("%s [0x%x, +%d) is not memory the device may reach",
                    what, address, length));
        }
    }

    private static boolean reachableRange(Reach reach, long address, long length) {
        return address != 0 && length >= 0 && address + length >= address && reach.reachable(address, length);
    }

    /** A CQ as the device sees it. */
    public static final class Cq {
        final int cqn;
        final UnsafeBuffer ring;
        final int ncqe;
        final UnsafeBuffer dbr;
        int pi;
        boolean overrun;

        Cq(int cqn, long buffer, int ncqe, long dbr) {
            this.cqn = cqn;
            this.ring = new UnsafeBuffer(buffer, ncqe * Cqe64.SIZE);
            this.ncqe = ncqe;
            this.dbr = new UnsafeBuffer(dbr, 8);
        }

        /** CQEs written so far. */
        public int produced() {
            return pi;
        }

        public boolean overrun() {
            return overrun;
        }
    }

    /** A QP as the device sees it. */
    public static final class Qp {
        final int qpn;
        final boolean ud;
        final UnsafeBuffer buf;
        final int rqCnt;
        final int rqShift;
        final int sqStart;
        final int sqCnt;
        final UnsafeBuffer dbr;
        final Cq sendCq;
        final Cq recvCq;
        int sqConsumed;   // WQEBBs, free-running
        int rqConsumed;   // WQEs, free-running
        int remoteQpn = -1;
        boolean error;
        int failNextWith = -1;

        Qp(int qpn, boolean ud, long buffer, int bufferBytes, int rqCnt, int rqShift, int sqStart, int sqCnt, long dbr,
           Cq sendCq, Cq recvCq) {
            this.qpn = qpn;
            this.ud = ud;
            this.buf = new UnsafeBuffer(buffer, bufferBytes);
            this.rqCnt = rqCnt;
            this.rqShift = rqShift;
            this.sqStart = sqStart;
            this.sqCnt = sqCnt;
            this.dbr = new UnsafeBuffer(dbr, 8);
            this.sendCq = sendCq;
            this.recvCq = recvCq;
        }

        public int sqConsumedWqebbs() {
            return sqConsumed;
        }

        /** 2RST: the device forgets the queue's position and errors. */
        void reset() {
            sqConsumed = 0;
            rqConsumed = 0;
            error = false;
            failNextWith = -1;
        }
    }

    private final Reach reach;
    private final Map<Integer, Qp> qps = new HashMap<>();
    private final List<Qp> order = new ArrayList<>();
    private final byte[] scratch = new byte[1 << 16];
    private final UnsafeBuffer staging = new UnsafeBuffer(scratch);
    private int executed;

    public LoopbackEngine(Reach reach) {
        this.reach = reach;
    }

    public Cq cq(int cqn, long buffer, int ncqe, long dbr) {
        if (ncqe <= 0 || Integer.bitCount(ncqe) != 1 || ncqe > (1 << 24)) {
            throw new IllegalArgumentException("CQ of " + ncqe + " CQEs");
        }
        requireReachable(reach, "CQ buffer", buffer, (long) ncqe * Cqe64.SIZE);
        requireReachable(reach, "CQ doorbell record", dbr, 8);
        return new Cq(cqn, buffer, ncqe, dbr);
    }

    public Qp qp(int qpn, boolean ud, long buffer, int bufferBytes, int rqCnt, int rqShift, int sqStart, int sqCnt,
                 long dbr, Cq sendCq, Cq recvCq) {
        if (bufferBytes <= 0 || sqStart < 0 || (long) sqStart + (long) sqCnt * SendWqeLayout.WQEBB > bufferBytes
                || ((long) rqCnt << rqShift) > sqStart || (rqCnt > 0 && Integer.bitCount(rqCnt) != 1)
                || (sqCnt > 0 && Integer.bitCount(sqCnt) != 1)) {
            throw new IllegalArgumentException("QP geometry: buffer " + bufferBytes + " bytes, RQ " + rqCnt + " << "
                    + rqShift + ", SQ " + sqCnt + " WQEBBs at " + sqStart);
        }
        requireReachable(reach, "QP buffer", buffer, bufferBytes);
        requireReachable(reach, "QP doorbell record", dbr, 8);
        Qp q = new Qp(qpn, ud, buffer, bufferBytes, rqCnt, rqShift, sqStart, sqCnt, dbr, sendCq, recvCq);
        qps.put(qpn, q);
        order.add(q);
        return q;
    }

    public void forget(int qpn) {
        order.remove(qps.remove(qpn));
    }

    /** RC/UC: where SENDs and WRITEs of {@code a} go (a QP may be connected to itself). */
    public void connect(Qp a, Qp b) {
        a.remoteQpn = b.qpn;
        b.remoteQpn = a.qpn;
    }

    /** The next WQE of {@code qp} completes with this error syndrome, and the QP flushes everything after it. */
    public void failNext(Qp qp, int syndrome) {
        qp.failNextWith = syndrome;
    }

    /** WQEs executed so far. */
    public int executed() {
        return executed;
    }

    /** Executes every WQE published so far; returns how many. */
    public int process() {
        int n = 0;
        for (Qp q : order) {
            n += drain(q);
        }
        executed += n;
        return n;
    }

    private int drain(Qp q) {
        int n = 0;
        if (q.sqCnt == 0) {
            return 0;
        }
        int producer = q.dbr.getIntVolatile(4);
        producer = Integer.reverseBytes(producer) & 0xffff;   // record word 1, be32 holding 16 bits
        while ((q.sqConsumed & 0xffff) != producer) {
            int ctrl = q.sqStart + (q.sqConsumed & (q.sqCnt - 1)) * SendWqeLayout.WQEBB;
            int ds = CtrlSeg.ds(q.buf, ctrl);
            int index = CtrlSeg.wqeIndex(q.buf, ctrl);
            if (index != (q.sqConsumed & 0xffff)) {
                throw new AssertionError("WQE at WQEBB " + q.sqConsumed + " carries index " + index);
            }
            execute(q, ctrl, ds);
            q.sqConsumed += SendWqeLayout.wqebbs(ds);
            n++;
        }
        return n;
    }

    private int seg(Qp q, int ctrl, int unit) {
        int off = ctrl + unit * SendWqeLayout.DS;
        int end = q.sqStart + q.sqCnt * SendWqeLayout.WQEBB;
        return off >= end ? off - q.sqCnt * SendWqeLayout.WQEBB : off;
    }

    private void execute(Qp q, int ctrl, int ds) {
        int opcode = CtrlSeg.opcode(q.buf, ctrl);
        int index = CtrlSeg.wqeIndex(q.buf, ctrl);
        boolean signaled = (CtrlSeg.fmCeSe(q.buf, ctrl) & FmCeSe.CE_MASK) != 0;
        if (q.error) {
            errorCqe(q.sendCq, CqeOpcode.REQ_ERR, CqeSyndrome.WR_FLUSH_ERR, opcode, q.qpn, index);
            return;
        }
        if (q.failNextWith >= 0) {
            errorCqe(q.sendCq, CqeOpcode.REQ_ERR, q.failNextWith, opcode, q.qpn, index);
            q.failNextWith = -1;
            q.error = true;
            return;
        }
        int unit = 1;
        int remote = q.remoteQpn;
        long raddr = 0;
        long swapAdd = 0;
        long compare = 0;
        boolean rdma = opcode == Mlx5Opcode.RDMA_WRITE || opcode == Mlx5Opcode.RDMA_WRITE_IMM
                || opcode == Mlx5Opcode.RDMA_READ || opcode == Mlx5Opcode.ATOMIC_CS || opcode == Mlx5Opcode.ATOMIC_FA;
        if (q.ud) {
            int av = seg(q, ctrl, unit);
            remote = DatagramSeg.dqpDct(q.buf, av) & 0xffffff;
            unit += DatagramSeg.SIZE / SendWqeLayout.DS;
        } else if (rdma) {
            int r = seg(q, ctrl, unit);
            raddr = RaddrSeg.raddr(q.buf, r);
            unit++;
            if (opcode == Mlx5Opcode.ATOMIC_CS || opcode == Mlx5Opcode.ATOMIC_FA) {
                int a = seg(q, ctrl, unit);
                swapAdd = AtomicSeg.swapAdd(q.buf, a);
                compare = AtomicSeg.compare(q.buf, a);
                unit++;
            }
        }
        // gather (or, for READ/atomics, the local scatter list)
        boolean gathers = opcode != Mlx5Opcode.RDMA_READ && opcode != Mlx5Opcode.ATOMIC_CS
                && opcode != Mlx5Opcode.ATOMIC_FA;
        int length = 0;
        long[] local = new long[64];
        int[] localLen = new int[64];
        int sges = 0;
        while (unit < ds) {
            int s = seg(q, ctrl, unit);
            if (InlineSeg.isInline(q.buf, s)) {
                int len = InlineSeg.length(q.buf, s);
                if (len < 0 || len > (ds - unit) * SendWqeLayout.DS - InlineSeg.HEADER_SIZE
                        || length + len > scratch.length) {
                    fail(q, CqeSyndrome.LOCAL_LENGTH_ERR, opcode, index);
                    return;
                }
                int ringStart = q.sqStart;
                int ringEnd = q.sqStart + q.sqCnt * SendWqeLayout.WQEBB;
                int from = s + InlineSeg.HEADER_SIZE;
                for (int i = 0; i < len; i++) {
                    int at = from + i;
                    if (at >= ringEnd) {
                        at -= ringEnd - ringStart;
                    }
                    scratch[length + i] = q.buf.getByte(at);
                }
                length += len;
                unit += InlineSeg.ds(len);
            } else {
                int len = DataSeg.byteCount(q.buf, s);
                long addr = DataSeg.addr(q.buf, s);
                if (len < 0 || sges == local.length || (gathers && length + len > scratch.length)) {
                    fail(q, CqeSyndrome.LOCAL_LENGTH_ERR, opcode, index);
                    return;
                }
                if (len > 0 && !reachableRange(reach, addr, len)) {
                    fail(q, CqeSyndrome.LOCAL_PROT_ERR, opcode, index);
                    return;
                }
                local[sges] = addr;
                localLen[sges++] = len;
                if (gathers) {
                    new UnsafeBuffer(addr, len).getBytes(0, scratch, length, len);
                    length += len;
                }
                unit++;
            }
        }
        Qp peer = qps.get(remote);
        int byteCnt = 0;
        long remoteLength = 0;
        if (opcode == Mlx5Opcode.RDMA_READ) {
            for (int i = 0; i < sges; i++) {
                remoteLength += localLen[i];
            }
        } else if (opcode == Mlx5Opcode.ATOMIC_CS || opcode == Mlx5Opcode.ATOMIC_FA) {
            if (sges == 0 || localLen[0] < 8) {
                fail(q, CqeSyndrome.LOCAL_LENGTH_ERR, opcode, index);
                return;
            }
            if ((raddr & 7) != 0) {
                fail(q, CqeSyndrome.REMOTE_ACCESS_ERR, opcode, index);   // atomics are 8-byte aligned (IBTA 9.4.5)
                return;
            }
            remoteLength = 8;
        } else {
            remoteLength = length;
        }
        if (rdma && remoteLength > 0 && !reachableRange(reach, raddr, remoteLength)) {
            fail(q, CqeSyndrome.REMOTE_ACCESS_ERR, opcode, index);
            return;
        }
        switch (opcode) {
            case Mlx5Opcode.SEND:
            case Mlx5Opcode.SEND_IMM:
                if (!deliver(peer, q, length, true, opcode == Mlx5Opcode.SEND_IMM ? CqeOpcode.RESP_SEND_IMM
                        : CqeOpcode.RESP_SEND, CtrlSeg.immBe(q.buf, ctrl))) {
                    fail(q, CqeSyndrome.REMOTE_OP_ERR, opcode, index);
                    return;
                }
                break;
            case Mlx5Opcode.RDMA_WRITE:
            case Mlx5Opcode.RDMA_WRITE_IMM:
                if (length > 0) {
                    new UnsafeBuffer(raddr, length).putBytes(0, scratch, 0, length);
                }
                if (opcode == Mlx5Opcode.RDMA_WRITE_IMM
                        && !deliver(peer, q, length, false, CqeOpcode.RESP_WR_IMM, CtrlSeg.immBe(q.buf, ctrl))) {
                    fail(q, CqeSyndrome.REMOTE_OP_ERR, opcode, index);
                    return;
                }
                break;
            case Mlx5Opcode.RDMA_READ: {
                long from = raddr;
                for (int i = 0; i < sges; i++) {
                    // chunked through the scratch buffer: an SGE may be longer than it
                    for (int done = 0; done < localLen[i]; ) {
                        int n = Math.min(localLen[i] - done, scratch.length);
                        new UnsafeBuffer(from + done, n).getBytes(0, scratch, 0, n);
                        new UnsafeBuffer(local[i] + done, n).putBytes(0, scratch, 0, n);
                        done += n;
                    }
                    from += localLen[i];
                    byteCnt += localLen[i];
                }
                break;
            }
            case Mlx5Opcode.ATOMIC_CS:
            case Mlx5Opcode.ATOMIC_FA: {
                UnsafeBuffer target = new UnsafeBuffer(raddr, 8);
                long old = target.getLong(0, ByteOrder.BIG_ENDIAN);
                long now = opcode == Mlx5Opcode.ATOMIC_FA ? old + swapAdd : (old == compare ? swapAdd : old);
                target.putLong(0, now, ByteOrder.BIG_ENDIAN);
                new UnsafeBuffer(local[0], 8).putLong(0, old, ByteOrder.BIG_ENDIAN);
                byteCnt = 8;
                break;
            }
            default:
                throw new AssertionError("opcode 0x" + Integer.toHexString(opcode) + " not handled by the test engine");
        }
        if (signaled) {
            int at = reserve(q.sendCq);
            if (at >= 0) {
                UnsafeBuffer r = q.sendCq.ring;
                r.putInt(at + Cqe64.BYTE_CNT_OFFSET, byteCnt, ByteOrder.BIG_ENDIAN);
                r.putInt(at + Cqe64.SOP_DROP_QPN_OFFSET, opcode << 24 | q.qpn, ByteOrder.BIG_ENDIAN);
                r.putShort(at + Cqe64.WQE_COUNTER_OFFSET, (short) index, ByteOrder.BIG_ENDIAN);
                publish(q.sendCq, at, CqeOpcode.REQ);
            }
        }
    }

    /** The WQE fails with {@code syndrome}: error CQE, QP in error, everything after it flushed. */
    private void fail(Qp q, int syndrome, int opcode, int index) {
        errorCqe(q.sendCq, CqeOpcode.REQ_ERR, syndrome, opcode, q.qpn, index);
        q.error = true;
    }

    /**
     * A receive on {@code peer}: consume its next RQ WQE, scatter (unless a WRITE_IMM), write the responder CQE.
     *
     * @return false if the receive WQE names memory the device may not reach (the responder's QP then errs with
     *         LOCAL_PROT_ERR; the requester's WQE fails too)
     */
    private boolean deliver(Qp peer, Qp from, int length, boolean scatter, int cqeOpcode, int immBe) {
        if (peer == null) {
            throw new AssertionError("no destination QP");
        }
        int producer = Integer.reverseBytes(peer.dbr.getIntVolatile(0)) & 0xffff;
        if ((peer.rqConsumed & 0xffff) == producer) {
            throw new AssertionError("RNR: QP 0x" + Integer.toHexString(peer.qpn) + " has no receive WQE posted");
        }
        int idx = peer.rqConsumed & (peer.rqCnt - 1);
        int wqe = idx << peer.rqShift;
        int total = scatter ? length : 0;
        int grh = peer.ud ? 40 : 0;
        int done = 0;
        int skip = grh;
        for (int i = 0; i < (1 << peer.rqShift) / DataSeg.SIZE && done < total + grh; i++) {
            int s = wqe + i * DataSeg.SIZE;
            if (DataSeg.lkey(peer.buf, s) == RecvWqeLayout.INVALID_LKEY) {
                break;
            }
            int cap = DataSeg.byteCount(peer.buf, s);
            long addr = DataSeg.addr(peer.buf, s);
            if (cap < 0 || (cap > 0 && !reachableRange(reach, addr, cap))) {
                errorCqe(peer.recvCq, CqeOpcode.RESP_ERR, CqeSyndrome.LOCAL_PROT_ERR, 0, peer.qpn,
                        peer.rqConsumed & 0xffff);
                peer.error = true;
                peer.rqConsumed++;
                return false;
            }
            int pos = 0;
            if (skip > 0) {
                int z = Math.min(skip, cap);
                new UnsafeBuffer(addr, z).setMemory(0, z, (byte) 0);
                skip -= z;
                pos = z;
            }
            int n = Math.min(cap - pos, total - done);
            if (n > 0) {
                new UnsafeBuffer(addr + pos, n).putBytes(0, scratch, done, n);
                done += n;
            }
        }
        if (done < total) {
            throw new AssertionError("receive WQE too small for " + total + " bytes");
        }
        int at = reserve(peer.recvCq);
        if (at >= 0) {
            UnsafeBuffer r = peer.recvCq.ring;
            r.putInt(at + Cqe64.BYTE_CNT_OFFSET, length + grh, ByteOrder.BIG_ENDIAN);
            r.putInt(at + Cqe64.IMM_INVAL_PKEY_OFFSET, cqeOpcode == CqeOpcode.RESP_SEND ? 0 : immBe, ByteOrder.BIG_ENDIAN);
            // flags_rqpn: for UD the sender's QPN and a GRH (bits 29:28 non-zero: IPv4 RoCEv2 here)
            r.putInt(at + Cqe64.FLAGS_RQPN_OFFSET, peer.ud ? (2 << 28) | from.qpn : 0, ByteOrder.BIG_ENDIAN);
            r.putInt(at + Cqe64.SOP_DROP_QPN_OFFSET, peer.qpn, ByteOrder.BIG_ENDIAN);
            r.putShort(at + Cqe64.WQE_COUNTER_OFFSET, (short) (peer.rqConsumed & 0xffff), ByteOrder.BIG_ENDIAN);
            publish(peer.recvCq, at, cqeOpcode);
        }
        peer.rqConsumed++;
        return true;
    }

    private void errorCqe(Cq cq, int cqeOpcode, int syndrome, int wqeOpcode, int qpn, int index) {
        int at = reserve(cq);
        if (at < 0) {
            return;
        }
        cq.ring.putByte(at + ErrCqe.SYNDROME_OFFSET, (byte) syndrome);
        cq.ring.putByte(at + ErrCqe.VENDOR_ERR_SYND_OFFSET, (byte) 0x42);
        cq.ring.putInt(at + ErrCqe.S_WQE_OPCODE_QPN_OFFSET, wqeOpcode << 24 | qpn, ByteOrder.BIG_ENDIAN);
        cq.ring.putShort(at + ErrCqe.WQE_COUNTER_OFFSET, (short) index, ByteOrder.BIG_ENDIAN);
        publish(cq, at, cqeOpcode);
    }

    /** The slot of the next CQE (body zeroed), or -1 when the CQ would overrun its consumer index. */
    private int reserve(Cq cq) {
        int ci = Integer.reverseBytes(cq.dbr.getIntVolatile(0)) & 0xffffff;
        if (((cq.pi - ci) & 0xffffff) >= cq.ncqe) {
            cq.overrun = true;
            return -1;
        }
        int at = (cq.pi & (cq.ncqe - 1)) * Cqe64.SIZE;
        cq.ring.setMemory(at, Cqe64.OP_OWN_OFFSET, (byte) 0);
        return at;
    }

    private static void publish(Cq cq, int at, int cqeOpcode) {
        int owner = (cq.pi & cq.ncqe) != 0 ? 1 : 0;
        cq.ring.putByteVolatile(at + Cqe64.OP_OWN_OFFSET, (byte) (cqeOpcode << 4 | owner));
        cq.pi++;
    }
}
