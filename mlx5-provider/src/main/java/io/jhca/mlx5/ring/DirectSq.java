package io.jhca.mlx5.ring;

import java.nio.ByteOrder;

import org.agrona.UnsafeApi;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.FmCeSe;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.mlx5.wqe.OneSgeWqe;
import io.jhca.mlx5.wqe.SendWqeLayout;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.VerbsException;

/**
 * A send queue driven directly, as a C program drives one through rdma-core's mlx5dv: the caller holds the producer
 * counter, each call writes one whole WQE at the counter it is given and returns the next one, {@link #doorbell}
 * publishes every WQE before the counter it is given, and the caller retires WQEs from their CQEs ({@link #retire};
 * a CQE names its WQE by {@code wqe_counter}, the counter's low 16 bits). No wr_id is kept: the caller knows its WQEs
 * by their counters. Every WQE is one WQEBB (a SEND, RDMA WRITE or READ of one SGE), so its slot is the counter masked
 * into the ring: nothing a caller passes reaches an address outside the ring, and the stores need no bounds check.
 *
 * <p>Why the caller holds the counter: a counter kept in a field here is stored at every WQE, and the check that the
 * ring has room then made the JIT keep that store and reload around it; with the counter in the caller's local the
 * posting loop compiles as the bare C loop does (see the benchmarks' HISTORY, round 43).
 *
 * <p>What is checked: a counter outside {@code [published, published + room)} (a WQE the device may be reading, or
 * one past the ring's room) is refused before any store; a doorbell for a WQE that was not written is refused; after
 * the QP's memory closed the doorbell refuses. The ring's memory stays mapped while this object holds its view
 * ({@code io.jhca.memory}), so a WQE written after the close lands in pages the QP gave up, never in unmapped memory.
 * Single writer, like rdma-core's send queue without its lock.
 */
public final class DirectSq {

    private static final boolean NATIVE_LITTLE_ENDIAN = ByteOrder.nativeOrder() == ByteOrder.LITTLE_ENDIAN;

    private final UnsafeBuffer buf;
    /** Address of WQEBB 0 of the send ring. */
    private final long slot0;
    private final int mask;
    private final int wqeCnt;
    private final int qpn;
    private final int sigBits;
    private final DoorbellRecord dbr;
    private final Bfreg bfreg;
    /** The counter after the last WQE published: the next WQE's. */
    private int published;
    /** The counter after the last WQE retired. */
    private int tail;
    /** {@code tail + wqeCnt - published}: WQEs that may be written after {@code published}; 0 once invalid. */
    private int span;
    /**
     * Why this queue may no longer be used (its QP was reset or destroyed, its device died), or null. One field, read
     * once per check, so a check that sees it set also has its reason; plain: nothing loops waiting for it, and the
     * doorbell's fences make each call read it again.
     */
    private String invalidReason;

    /**
     * @param buf   the QP buffer, off-heap; kept, since it holds the mapping and tells when the memory closed
     * @param start offset of the send ring in it
     * @param post  the producer counter to start from, with no WQE outstanding
     */
    public DirectSq(UnsafeBuffer buf, int start, int wqeCnt, int qpn, boolean sqSigAll, DoorbellRecord dbr, Bfreg bfreg,
                    int post) {
        if (buf.byteArray() != null) {
            throw new IllegalArgumentException("a direct send queue needs off-heap ring memory");
        }
        if (wqeCnt <= 0 || wqeCnt > 0x8000 || Integer.bitCount(wqeCnt) != 1 || start < 0
                || (start & (SendWqeLayout.WQEBB - 1)) != 0
                || (long) start + (long) wqeCnt * SendWqeLayout.WQEBB > buf.capacity()) {
            throw new IllegalArgumentException("send ring of " + wqeCnt + " WQEBBs at " + start
                    + " does not fit a buffer of " + buf.capacity());
        }
        this.buf = buf;
        this.slot0 = buf.addressOffset() + start;
        this.mask = wqeCnt - 1;
        this.wqeCnt = wqeCnt;
        this.qpn = qpn;
        this.sigBits = sqSigAll ? FmCeSe.CQ_UPDATE : 0;
        this.dbr = dbr;
        this.bfreg = bfreg;
        this.published = post;
        this.tail = post;
        this.span = wqeCnt;
    }

    /**
     * RDMA WRITE of {@code length} bytes at {@code addr} (lkey) to {@code raddr} (rkey), as the WQE of counter
     * {@code pi}; returns {@code pi + 1}. {@code sendFlags}: {@link SendFlags} SIGNALED, FENCE, SOLICITED.
     */
    public int write(int pi, int sendFlags, long raddr, int rkey, int lkey, long addr, int length) {
        return rdma(pi, Mlx5Opcode.RDMA_WRITE, sendFlags, 0, raddr, rkey, lkey, addr, length);
    }

    /** RDMA WRITE with immediate: the responder's receive completion carries {@code imm}. */
    public int writeImm(int pi, int sendFlags, int imm, long raddr, int rkey, int lkey, long addr, int length) {
        return rdma(pi, Mlx5Opcode.RDMA_WRITE_IMM, sendFlags, imm, raddr, rkey, lkey, addr, length);
    }

    /** RDMA READ of {@code length} bytes at {@code raddr} (rkey) into {@code addr} (lkey). */
    public int read(int pi, int sendFlags, long raddr, int rkey, int lkey, long addr, int length) {
        return rdma(pi, Mlx5Opcode.RDMA_READ, sendFlags, 0, raddr, rkey, lkey, addr, length);
    }

    /** SEND of {@code length} bytes at {@code addr} (lkey) into the responder's next receive. */
    public int send(int pi, int sendFlags, int lkey, long addr, int length) {
        return send(pi, Mlx5Opcode.SEND, sendFlags, 0, lkey, addr, length);
    }

    /** SEND with immediate: the responder's receive completion carries {@code imm}. */
    public int sendImm(int pi, int sendFlags, int imm, int lkey, long addr, int length) {
        return send(pi, Mlx5Opcode.SEND_IMM, sendFlags, imm, lkey, addr, length);
    }

    private int send(int pi, int opcode, int sendFlags, int imm, int lkey, long addr, int length) {
        if (pi - published + Integer.MIN_VALUE >= span + Integer.MIN_VALUE) {   // as in rdma()
            throw outside(pi);
        }
        if (length <= 0) {
            throw badLength(length);
        }
        OneSgeWqe.putSendAt(slot0 + ((long) (pi & mask) << 6), pi, opcode, qpn, fmCeSe(sendFlags), CtrlSeg.beImm(imm),
                lkey, addr, length);
        return pi + 1;
    }

    private int rdma(int pi, int opcode, int sendFlags, int imm, long raddr, int rkey, int lkey, long addr,
                     int length) {
        // pi - published in [0, span), as one unsigned compare; kept in line (a shared check method read 1.13-1.20
        // at batch 32 against 1.11-1.15)
        if (pi - published + Integer.MIN_VALUE >= span + Integer.MIN_VALUE) {
            throw outside(pi);
        }
        if (length <= 0) {
            throw badLength(length);
        }
        OneSgeWqe.putRdmaAt(slot0 + ((long) (pi & mask) << 6), pi, opcode, qpn, fmCeSe(sendFlags),
                CtrlSeg.beImm(imm), raddr, rkey, lkey, addr, length);
        return pi + 1;
    }

    /** A data segment's byte_count 0 means 2 GiB to the device (mlx5 PRM), and one over 2^31 - 1 is no length. */
    private static IllegalArgumentException badLength(int length) {
        return new IllegalArgumentException("SGE length " + length + ": a direct WQE carries 1..2^31-1 bytes");
    }

    /** fm_ce_se as rdma-core's _mlx5_post_send sets it (sq_signal_bits | fence | CQ_UPDATE | SOLICITED), branch-free. */
    private int fmCeSe(int sendFlags) {
        return sigBits | (sendFlags & SendFlags.FENCE) << 7 | (sendFlags & SendFlags.SIGNALED) << 2
                | (sendFlags & SendFlags.SOLICITED) >> 1;
    }

    private RuntimeException outside(int pi) {
        String why = invalidReason;
        if (why != null) {
            return new IllegalStateException(why);
        }
        if (pi - published < 0) {
            return new IllegalArgumentException("direct send queue of QP 0x" + Integer.toHexString(qpn) + ": WQE " + pi
                    + " was published already (the next is " + published + ")");
        }
        return new VerbsException(VerbsException.ENOMEM, "direct send queue of QP 0x" + Integer.toHexString(qpn)
                + " full at WQE " + pi + ": " + (published - tail) + " published and not retired, room for "
                + span + " after " + published + " (retire WQEs from their CQEs)");
    }

    /**
     * Publishes the WQEs from the last doorbell up to, not including, counter {@code pi} (rdma-core
     * {@code post_send_db}): the doorbell record, then the 8-byte doorbell carrying the last WQE's control word.
     * Nothing to publish when {@code pi} is where the last doorbell left off.
     *
     * @throws IllegalArgumentException if {@code pi} is not after the last doorbell and within the room, or the WQE
     *                                  before it was not written
     * @throws IllegalStateException    if the QP's memory was closed
     */
    public void doorbell(int pi) {
        int p = published;
        int n = pi - p;
        String why = invalidReason;
        if (why != null) {
            throw new IllegalStateException(why);
        }
        if (n == 0) {
            return;
        }
        if (n < 0 || n > span) {
            throw new IllegalArgumentException("direct send queue of QP 0x" + Integer.toHexString(qpn) + ": doorbell at "
                    + pi + " outside the WQEs written since the last one (" + p + ".." + (p + span) + ")");
        }
        if (buf.capacity() == 0) {
            throw new IllegalStateException("direct send queue of QP 0x" + Integer.toHexString(qpn)
                    + ": the QP's memory was closed");
        }
        // the index from a 4-byte load of its own, not from the word loaded below: taken from that word, the check
        // cost 0.05 at batch 8 (Mlx5PairedRun direct/bare, 1.21-1.24 against 1.16-1.18; HISTORY round 43)
        if (indexAt(pi - 1) != ((pi - 1) & 0xffff)) {   // its slot holds an older WQE
            throw new IllegalArgumentException("direct send queue of QP 0x" + Integer.toHexString(qpn) + ": doorbell at "
                    + pi + " but WQE " + (pi - 1) + " was not written");
        }
        long raw = UnsafeApi.getLong(null, slot0 + ((long) ((pi - 1) & mask) << 6));
        long ctrl = NATIVE_LITTLE_ENDIAN ? Long.reverseBytes(raw) : raw;
        published = pi;
        span -= n;
        bfreg.ring(dbr, pi, ctrl);
    }

    /** The 16-bit index in the control segment of the WQE slot of counter {@code c}. */
    private int indexAt(int c) {
        int raw = UnsafeApi.getInt(null, slot0 + ((long) (c & mask) << 6));   // opmod, index (big-endian), opcode
        return (NATIVE_LITTLE_ENDIAN ? Integer.reverseBytes(raw) : raw) >>> 8 & 0xffff;
    }

    /**
     * A CQE whose {@code wqe_counter} is {@code wqeCounter} retires that WQE and every published one before it.
     *
     * @throws IllegalArgumentException if no published WQE still outstanding has that index (a stale CQE, or one of
     *                                  another queue): nothing changes
     */
    public void retire(int wqeCounter) {
        String why = invalidReason;
        if (why != null) {
            throw new IllegalStateException(why);
        }
        int t = tail;
        int done = (wqeCounter + 1 - t) & 0xffff;
        if (done == 0 || done > published - t) {
            throw new IllegalArgumentException("wqe_counter " + wqeCounter + " names no outstanding WQE of QP 0x"
                    + Integer.toHexString(qpn) + " (outstanding: " + (published - t) + " from " + (t & 0xffff) + ")");
        }
        tail = t + done;
        span += done;
    }

    /**
     * Every later write, doorbell and retire throws with {@code reason}: the provider's, when the QP is reset (its
     * counters go back to 0 on the device) or destroyed, or the device dies. Called by the provider.
     */
    public void invalidate(String reason) {
        invalidReason = reason;
        span = 0;
    }

    /** The counter the next WQE gets after the last doorbell. */
    public int producer() {
        return published;
    }

    /** WQEs that may be written after the last doorbell before the ring is full. */
    public int room() {
        return span;
    }

    /** WQEs published and not yet retired. */
    public int outstanding() {
        return published - tail;
    }

    /** WQEBBs in the ring: the most WQEs outstanding at once. */
    public int wqeCnt() {
        return wqeCnt;
    }

    public int qpn() {
        return qpn;
    }
}
