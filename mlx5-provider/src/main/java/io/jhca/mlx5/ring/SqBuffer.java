package io.jhca.mlx5.ring;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.doorbell.DoorbellRecord;
import io.jhca.mlx5.wqe.AtomicSeg;
import io.jhca.mlx5.wqe.CtrlSeg;
import io.jhca.mlx5.wqe.DataSeg;
import io.jhca.mlx5.wqe.DatagramSeg;
import io.jhca.mlx5.wqe.FmCeSe;
import io.jhca.mlx5.wqe.InlineSeg;
import io.jhca.mlx5.wqe.RaddrSeg;
import io.jhca.mlx5.wqe.UmrCtrlSeg;
import io.jhca.mlx5.wqe.MkeyContextSeg;
import io.jhca.mlx5.wqe.OneSgeWqe;
import io.jhca.mlx5.wqe.KlmSeg;
import io.jhca.mlx5.wqe.SendWqeLayout;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcOpcode;

/**
 * A send queue: a ring of {@code wqeCnt} (a power of two) 64-byte WQEBBs inside the QP buffer, written in place.
 *
 * <p>Counters as rdma-core keeps them ({@code struct mlx5_wq}): {@code curPost} counts WQEBBs and is what the control
 * segment's 16-bit index and the doorbell record carry; {@code posted} counts work requests written, {@code head}
 * those made visible, {@code tail} those the CQ has retired; a WQE at slot {@code idx} remembers its wr_id and the
 * WR number {@code wqeHead[idx]} it ends, so one CQE retires every unsignaled WQE before it
 * ({@code sq.tail = wqe_head[idx] + 1}). The queue is full when {@code posted - tail >= maxPost}, where maxPost is
 * how many WQEs of the largest size fit.
 *
 * <p>A WQE is opened with {@link #begin}, filled segment by segment ({@link #raddr}, {@link #atomic},
 * {@link #datagram}, {@link #data}, {@link #inline}) and closed with {@link #finish}. {@code begin} writes the whole
 * control segment and {@code finish} its DS count, as rdma-core's {@code _common_wqe_init} and
 * {@code _common_wqe_finilize} do; {@code finish} advances {@code curPost}. Segments are 16-byte units; a WQE longer than the room left before the ring end
 * continues at slot 0, exactly as rdma-core writes it ({@code if (seg == qend) seg = mlx5_get_send_wqe(qp, 0)}).
 * {@link #ringDoorbell} publishes every WQE since the last doorbell with one doorbell ({@code post_send_db}).
 * Every segment's bytes come from the golden-tested writers of {@code io.jhca.mlx5.wqe} ({@link CtrlSeg#put},
 * {@link RaddrSeg#put}, {@link AtomicSeg#set}, {@link DataSeg#put}, {@link DatagramSeg}, {@link InlineSeg}):
 * one encoder for the tests and the device.
 *
 * <p>Single writer for posting; {@link #retire} is called by the thread polling the send CQ (the tail is published
 * with release/acquire).
 */
public final class SqBuffer {

    private static final VarHandle TAIL;

    static {
        try {
            TAIL = MethodHandles.lookup().findVarHandle(SqBuffer.class, "tail", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    /** BlueFlame policy: never, single inline WQEs (rdma-core's default), any single WQE (MLX5_POST_SEND_PREFER_BF). */
    public static final int BF_OFF = 0;
    public static final int BF_INLINE = 1;
    public static final int BF_PREFER = 2;

    private final UnsafeBuffer buf;
    private final int start;
    private final int end;
    /** Bytes in the ring minus one: a segment offset wraps to the ring's start by masking. */
    private final int ringMask;
    private final int wqeCnt;
    private final int maxPost;
    private final int qpn;
    private final int sigBits;
    private final DoorbellRecord dbr;
    private final Bfreg bfreg;
    private final int bfMode;
    /**
     * Two longs per WQE slot, side by side ({@link #wridAt}, {@link #metaAt}): the WR's wr_id, then its meta word
     * ({@link #meta}: the WR number the WQE ends, {@code wqe_head}; its size in WQEBBs; its completion opcode). One
     * store per WQE for those three, no reference store (which costs a G1 post-write barrier), and a completion needs
     * no read of the WQE back from the ring. One array where two (wr_ids, meta words) kept the posting loop one base
     * register and one mask busier: JMH p50 at batch 32, five pairs of JVMs, ring level 119-124 -> 109-119 ns, the
     * builder 175-197 -> 144-163, postSend 196-201 -> 187-194.
     */
    private final long[] slots;
    private static final WcOpcode[] WC_OPCODES = WcOpcode.values();

    private int curPost;
    /**
     * Work requests written, published or not (rdma-core's {@code head + nreq}): the WR number a WQE ends is this
     * counter as it is written, and the queue's fill is this minus the tail, with no sum per WQE.
     */
    private int posted;
    /** Work requests made visible to the device; {@code posted - head} are pending (rdma-core's {@code nreq}). */
    private int head;
    /**
     * The tail as {@link #full()} last read it (with acquire). The tail only grows, so a queue full by this value may
     * not be; only then is the tail read again: one acquire per refill instead of one per WR keeps the posting loop
     * free of a barrier after which the JIT reloads every field.
     */
    private int tailSeen;
    /**
     * WQEBB index of the oldest WQE not retired (the kernel's {@code sq.last_poll}): where a software flush starts.
     * Written with the tail, by the thread polling the send CQ.
     */
    private int lastPoll;
    @SuppressWarnings("unused") // through TAIL
    private volatile int tail;

    // where the current batch began
    private int batchCurPost;
    private int batchPosted;
    private int batchLastCtrl;
    private int batchLastInlinePost;
    /** Control segment of the last WQE closed: what the doorbell carries. */
    private int lastCtrl;
    /** {@code curPost} after the last inline WQE closed: the last WQE was inline when it equals {@code curPost}. */
    private int lastInlinePost = -1;
    private boolean held;

    // the open WQE: its control segment (written by begin, its DS count by finish), its size so far, its kind.
    // As few fields as the builder needs between calls: every field store is a store per WQE.
    private int ctrl = -1;
    private int ds;
    private int kind;
    private static final int ATOMIC = 1;
    private static final int INLINE = 2;
    /**
     * The fence the next WQE gets unless it asks for FENCE: INITIATOR_SMALL after a window bind or LOCAL_INV
     * (rdma-core qp.c {@code next_fence}, kept across posts in {@code qp->fm_cache}).
     */
    private int nextFence;
    private int batchNextFence;
    /** {@link #nextFence} before the open WQE took it: {@link #dropOpenWqe} gives it back. */
    private int openFence;
    private int inlineHeader = -1;
    private int inlineEnd;
    private int inlineBytes;

    /**
     * @param buf     the QP buffer
     * @param start   offset of the SQ in it (after the RQ), a multiple of 64
     * @param wqeCnt  WQEBBs in the ring, a power of two
     * @param maxPost WQEs that may be outstanding (ring size / largest WQE)
     * @param qpn     the QP number, for every control segment
     * @param sqSigAll every WQE asks for a CQE (sq_sig_all: rdma-core's {@code sq_signal_bits})
     * @param dbr     the QP's doorbell record (word 1 is the SQ counter)
     * @param bfMode  {@link #BF_OFF}, {@link #BF_INLINE} or {@link #BF_PREFER}
     */
    public SqBuffer(UnsafeBuffer buf, int start, int wqeCnt, int maxPost, int qpn, boolean sqSigAll, DoorbellRecord dbr,
                    Bfreg bfreg, int bfMode) {
        if (wqeCnt <= 0 || Integer.bitCount(wqeCnt) != 1 || (start & (SendWqeLayout.WQEBB - 1)) != 0
                || (long) start + (long) wqeCnt * SendWqeLayout.WQEBB > buf.capacity() || maxPost < 1 || maxPost > wqeCnt) {
            throw new IllegalArgumentException("send ring of " + wqeCnt + " WQEBBs at " + start + " (max_post " + maxPost
                    + ") does not fit a buffer of " + buf.capacity());
        }
        this.buf = buf;
        this.start = start;
        this.end = start + wqeCnt * SendWqeLayout.WQEBB;
        this.ringMask = wqeCnt * SendWqeLayout.WQEBB - 1;
        this.wqeCnt = wqeCnt;
        this.maxPost = maxPost;
        this.qpn = qpn;
        this.sigBits = sqSigAll ? FmCeSe.CQ_UPDATE : 0;
        this.dbr = dbr;
        this.bfreg = bfreg;
        this.bfMode = bfMode;
        this.slots = new long[2 * wqeCnt];
    }

    public int wqeCnt() {
        return wqeCnt;
    }

    /** The QP buffer the ring lives in (for tools and tests that read WQEs back). */
    public UnsafeBuffer buffer() {
        return buf;
    }

    public int maxPost() {
        return maxPost;
    }

    /** Offset of the ring's first byte in the QP buffer. */
    public int start() {
        return start;
    }

    /** WQEBBs produced so far (free-running; its low 16 bits go to the doorbell record). */
    public int curPost() {
        return curPost;
    }

    /** Work requests made visible to the device. */
    public int head() {
        return head;
    }

    /** Work requests retired by completions. */
    public int tail() {
        return (int) TAIL.getAcquire(this);
    }

    /** WQEs written since the last doorbell. */
    public int pending() {
        return posted - head;
    }

    /**
     * Reads the tail (with acquire) before a builder batch, so that {@link #full()} reads it in the application's
     * posting loop only when the queue fills there. An acquire in that loop, even on a branch taken once in many
     * batches, is a barrier the JIT keeps: every field and invariant of the loop is then loaded again at every WR.
     * With this and the builder's plain closed check ({@code VerbsResource.isClosedPlain}) the builder at batch 32
     * takes 0.39-0.47 of its time before; either barrier left in the loop keeps most of it. postSend reads it
     * once per chain instead: when its walk starts ({@link #startBatch}), or through {@link #room} on its
     * path after a check walk.
     */
    public void refreshTail() {
        tailSeen = tail();
    }

    /**
     * How many of {@code wanted} more WRs fit now (at most {@code wanted}): the tail is read (with acquire) only when
     * the one read last leaves fewer. A loop that writes that many calls no {@link #full()}, so no acquire is
     * compiled into it.
     */
    public int room(int wanted) {
        int free = maxPost - (posted - tailSeen);
        if (free < wanted) {
            refreshTail();
            free = maxPost - (posted - tailSeen);
        }
        return Math.min(free, wanted);
    }

    /** Whether one more WQE would overflow the queue (rdma-core {@code mlx5_wq_overflow}). */
    public boolean full() {
        return room(1) == 0;
    }

    /**
     * Remembers where a builder batch (or a postSend chain written as it is checked) starts, so {@link #abortBatch}
     * can drop it. WQEs still pending are published first, and the tail is read ({@link #refreshTail}).
     *
     * @return how many WRs fit now
     */
    public int startBatch() {
        ringDoorbell();
        refreshTail();
        batchCurPost = curPost;
        batchPosted = posted;
        batchNextFence = nextFence;
        batchLastCtrl = lastCtrl;
        batchLastInlinePost = lastInlinePost;
        ctrl = -1;
        return maxPost - (posted - tailSeen);
    }

    /**
     * Opens a WQE at {@code curPost}. The caller has checked {@link #full()}.
     *
     * @param mlx5Opcode {@code Mlx5Opcode} value
     * @param wc         the completion opcode this WR reports (kept for error and flush completions)
     * @param sendFlags  verbs {@link SendFlags}: SIGNALED asks for a CQE, SOLICITED and FENCE go to fm_ce_se
     * @param imm        immediate data as the application gives it (sent big-endian), 0 if none
     * @return the offset of the control segment in the QP buffer
     */
    public int begin(int mlx5Opcode, WcOpcode wc, long wrId, int sendFlags, int imm) {
        int post = curPost;
        int c = ctrlAt(post);
        openFence = nextFence;
        int fmCeSe = fmCeSe(sendFlags);
        // the whole control segment now, its DS count when the WQE closes; imm is stored as-is, big-endian on the wire
        CtrlSeg.put(buf, c, post, mlx5Opcode, 0, qpn, fmCeSe, 0, 0, CtrlSeg.beImm(imm));
        ctrl = c;
        ds = CtrlSeg.SIZE / SendWqeLayout.DS;
        kind = 0;
        slots[wridAt(post)] = wrId;
        slots[metaAt(post)] = meta(posted, 0, wc.ordinal());   // its size when it closes (finish)
        return c;
    }

    /**
     * A whole WQE of at most one gather entry in one call: what {@link #begin}, {@link #raddr}, {@link #data} and
     * {@link #finish} write for a SEND, RDMA WRITE or RDMA READ (with or without immediate) of one SGE, byte for
     * byte (WqeBytesTest compares the two), with everything in locals: the common WR costs its WQE's stores and
     * the ring's counters, not the builder's state. Such a WQE is 2 or 3 DS, one WQEBB, so it never wraps.
     * No WQE may be open; the caller has checked {@link #full()}.
     *
     * @param rdma   whether a remote address segment follows the control segment ({@code raddr}, {@code rkey})
     * @param length 0 for no gather entry (skipped, as {@link #data} skips it)
     */
    public void writeOneSge(int mlx5Opcode, WcOpcode wc, long wrId, int sendFlags, int imm, boolean rdma, long raddr,
                            int rkey, int lkey, long addr, int length) {
        writeOneSge(mlx5Opcode, wc.ordinal(), wrId, sendFlags, imm, rdma, raddr, rkey, lkey, addr, length);
    }

    /** As the method above, with the completion opcode as its ordinal (what the verbs builder keeps). */
    public void writeOneSge(int mlx5Opcode, int wcOrdinal, long wrId, int sendFlags, int imm, boolean rdma, long raddr,
                            int rkey, int lkey, long addr, int length) {
        if (ctrl >= 0) {
            throw new IllegalStateException("a WQE is open: finish it first");
        }
        int post = curPost;
        int c = ctrlAt(post);
        OneSgeWqe.put(buf, c, post, mlx5Opcode, qpn, fmCeSe(sendFlags), CtrlSeg.beImm(imm), rdma, raddr, rkey, lkey, addr,
                length);
        slots[wridAt(post)] = wrId;
        slots[metaAt(post)] = meta(posted, 1, wcOrdinal);
        lastCtrl = c;
        curPost = post + 1;
        posted++;
    }

    /**
     * The control segment's fm_ce_se for a WQE opening now (qp.c _mlx5_post_send: sq_signal_bits | fence |
     * CQ_UPDATE if signaled | SOLICITED if solicited); takes the fence a window bind left for the next WQE.
     */
    private int fmCeSe(int sendFlags) {
        int fence = nextFence;
        if (fence != 0) {
            nextFence = 0;
        }
        return sigBits
                | ((sendFlags & SendFlags.FENCE) != 0 ? FmCeSe.FENCE : fence)
                | ((sendFlags & SendFlags.SIGNALED) != 0 ? FmCeSe.CQ_UPDATE : 0)
                | ((sendFlags & SendFlags.SOLICITED) != 0 ? FmCeSe.SOLICITED : 0);
    }

    /** Replaces the open WQE's immediate (a window bind's control segment carries the window's rkey there). */
    public void immediate(int imm) {
        openCtrl();
        CtrlSeg.putImm(buf, ctrl, CtrlSeg.beImm(imm));
    }

    /** Remote address segment (RDMA and atomics): big-endian raddr and rkey. */
    public void raddr(long remoteAddr, int rkey) {
        RaddrSeg.put(buf, nextSeg(RaddrSeg.SIZE), remoteAddr, rkey);
    }

    /** Atomic segment: for CMP_SWAP swap and compare, for FETCH_ADD the addend in {@code swapAdd} and 0. */
    public void atomic(long swapAdd, long compare) {
        AtomicSeg.set(buf, nextSeg(AtomicSeg.SIZE), swapAdd, compare);
        kind |= ATOMIC;   // its data segment carries 8 bytes whatever the SGE says
    }

    /** UD datagram segment: the address handle's 48-byte AV with the remote QPN and Q_Key (qp.c _set_datagram_seg). */
    public void datagram(DirectBuffer av, int avOffset, int remoteQpn, int remoteQkey) {
        DatagramSeg.setUd(buf, nextSeg(DatagramSeg.SIZE), av, avOffset, remoteQpn, remoteQkey);
    }

    /**
     * The segments of a memory window bind, unbind or LOCAL_INV after the control segment (rdma-core qp.c
     * {@code set_bind_wr}): UMR control, mkey context, and for a bind (length non-zero) the KLM naming the span in
     * the MR {@code lkey}. Each segment starts on a WQEBB boundary, so it wraps at the ring end as a whole.
     */
    public void umr(boolean type2, int newRkey, int accessFlags, long addr, long length, int lkey) {
        UmrCtrlSeg.set(buf, nextSeg(UmrCtrlSeg.SIZE), type2, length);
        nextFence = FmCeSe.FENCE_INITIATOR_SMALL;   // the WQE after a bind waits for it (qp.c)
        MkeyContextSeg.set(buf, nextSeg(MkeyContextSeg.SIZE), type2, newRkey, qpn, accessFlags, addr, length);
        if (length != 0) {
            KlmSeg.set(buf, nextSeg(KlmSeg.SIZE), (int) length, lkey, addr);
        }
    }

    /** A gather entry; a zero-length one is skipped as rdma-core does. Atomics always carry 8 bytes. */
    public void data(int lkey, long addr, int length) {
        if (length == 0) {
            return;
        }
        DataSeg.put(buf, nextSeg(DataSeg.SIZE), (kind & ATOMIC) != 0 ? AtomicSeg.ATOMIC_SIZE : length, lkey, addr);
    }

    /** Appends inline payload; the segment's header is written by {@link #finish}. */
    public void inline(DirectBuffer src, int offset, int length) {
        if (length == 0) {
            return;
        }
        if ((kind & INLINE) == 0) {
            inlineHeader = segAt(openCtrl(), ds);
            inlineEnd = inlineHeader + InlineSeg.HEADER_SIZE;
            inlineBytes = 0;
            kind |= INLINE;
        }
        if (inlineBytes + length > end - start - InlineSeg.HEADER_SIZE) {
            throw new IllegalArgumentException("inline data of " + (inlineBytes + length) + " bytes does not fit the send ring");
        }
        inlineEnd = InlineSeg.copyWrapped(buf, start, end, inlineEnd, src, offset, length);
        inlineBytes += length;
    }

    /** Closes the WQE: inline header, control segment (with DS), wr bookkeeping; {@code curPost} advances. */
    public void finish() {
        int c = openCtrl();
        int n = ds;
        boolean inl = (kind & INLINE) != 0;
        if (inl) {
            InlineSeg.setHeader(buf, inlineHeader, inlineBytes);
            int pad = -(inlineEnd - start) & (SendWqeLayout.DS - 1);
            buf.setMemory(inlineEnd, pad, (byte) 0);   // reproducible bytes; the tail of the last DS is unused
            n += InlineSeg.ds(inlineBytes);
        }
        if (n > SendWqeLayout.MAX_DS || SendWqeLayout.wqebbs(n) > wqeCnt) {
            throw new IllegalStateException("WQE of " + n + " DS does not fit (max 63 DS, ring of " + wqeCnt + " WQEBBs)");
        }
        CtrlSeg.putQpnDs(buf, c, qpn, n);
        slots[metaAt((c - start) >> SendWqeLayout.WQEBB_SHIFT)] |= (long) SendWqeLayout.wqebbs(n) << 8;
        lastCtrl = c;
        curPost += SendWqeLayout.wqebbs(n);
        if (inl) {
            lastInlinePost = curPost;
        }
        posted++;
        ctrl = -1;
    }

    /**
     * Opens again the WQE that {@link #writeOneSge} wrote last, as if {@link #begin}, {@link #raddr} and {@link #data}
     * had written it and {@link #finish} had not run: more data segments may follow, and {@code finish} closes it with
     * its new size. For a builder WR written at its first SGE that gets a second one. Nothing since the last doorbell
     * was published, so its slot is still the driver's. Its fence stays as written (the next WQE does not get it back):
     * a builder WR that fails after this drops its whole batch ({@link #abortBatch}), not this WQE alone.
     *
     * @throws IllegalStateException if a WQE is open or the last WQE is not an unpublished one-WQEBB WQE
     */
    public void reopenLast() {
        int c = lastCtrl;
        int post = curPost - 1;
        if (ctrl >= 0 || posted == head || c != ctrlAt(post) || SendWqeLayout.wqebbs(dsAt(c)) != 1) {
            throw new IllegalStateException("no unpublished one-call WQE to reopen");
        }
        curPost = post;
        posted--;
        ctrl = c;
        ds = dsAt(c);
        kind = 0;
        openFence = nextFence;
        slots[metaAt(post)] &= ~(0xffL << 8);   // its size comes back with finish
    }

    /**
     * Drops the WQE opened by {@link #begin} and not finished (its WR was refused half-way): nothing of it was
     * published and {@code curPost} did not move, so the next WQE takes its slot, and the fence a window bind left
     * goes to that next WQE (as mlx5_ib keeps {@code qp->next_fence} when a WR fails). No-op if no WQE is open.
     */
    public void dropOpenWqe() {
        if (ctrl >= 0) {
            ctrl = -1;
            nextFence = openFence;
        }
    }

    /** Drops every WQE since {@link #startBatch} (nothing was published: the device never saw them). */
    public void abortBatch() {
        curPost = batchCurPost;
        posted = batchPosted;
        nextFence = batchNextFence;
        lastCtrl = batchLastCtrl;
        lastInlinePost = batchLastInlinePost;
        ctrl = -1;
    }

    /**
     * Holds doorbells (true): WQEs are written but not published, they stay pending until the hold is lifted (false)
     * and {@link #ringDoorbell} runs. The provider's SQD state: the device gets no new WQE while the QP is drained.
     */
    public void hold(boolean on) {
        held = on;
    }

    public boolean held() {
        return held;
    }

    /**
     * Publishes the WQEs since the last doorbell, rdma-core's {@code post_send_db}: {@code head += nreq}, WQE stores
     * before the doorbell record, record := curPost & 0xffff, MMIO fence, then either a BlueFlame copy of the single
     * WQE or the 8-byte doorbell (first 8 bytes of the last control segment), flush, switch bfreg halves.
     */
    public void ringDoorbell() {
        int nreq = posted - head;
        if (nreq == 0 || held) {
            return;
        }
        head = posted;
        if (bfMode != BF_OFF && nreq == 1 && (lastInlinePost == curPost || bfMode == BF_PREFER)
                && bfreg.blueFlameFits(dsAt(lastCtrl))) {
            bfreg.blueFlame(dbr, curPost, buf, start, end, lastCtrl, dsAt(lastCtrl));
        } else {
            bfreg.ring(dbr, curPost, buf, lastCtrl);
        }
        batchCurPost = curPost;
        batchPosted = posted;
        batchNextFence = nextFence;
    }

    // ---- completion side ----

    /** Where the wr_id of the WQE at producer counter (or wqe_counter) {@code post} is kept in {@link #slots}. */
    private int wridAt(int post) {
        return post << 1 & (slots.length - 1);   // masked by the array's own length: the JIT drops the range check
    }

    /** Where that WQE's meta word is kept, next to its wr_id. */
    private int metaAt(int post) {
        return (post << 1 | 1) & (slots.length - 1);
    }

    /** A slot's meta word: the WR number the WQE ends shifted left by 16, its WQEBBs (at most 16) by 8, its opcode. */
    private static long meta(int wrNumber, int wqebbs, int wcOrdinal) {
        return (long) wrNumber << 16 | wqebbs << 8 | wcOrdinal;
    }

    public long wrId(int wqeCounter) {
        return slots[wridAt(wqeCounter)];
    }

    public WcOpcode wcOpcode(int wqeCounter) {
        return WC_OPCODES[(int) slots[metaAt(wqeCounter)] & 0xff];
    }

    /** A CQE for the WQE at {@code wqeCounter} retires it and every WQE before it. */
    public void retire(int wqeCounter) {
        long m = slots[metaAt(wqeCounter)];
        lastPoll = wqeCounter + (int) (m >> 8 & 0xff);
        TAIL.setRelease(this, (int) (m >> 16) + 1);
    }

    /**
     * Work requests posted and not retired: those given to the device, and those a held doorbell (SQD) keeps back,
     * which the application posted too. A software flush completes exactly these.
     */
    public int outstanding() {
        return (held ? posted : head) - (int) TAIL.getAcquire(this);
    }

    /**
     * Retires the oldest outstanding WQE without a CQE (a software flush, mlx5_ib's {@code sw_comp}) and returns its
     * slot, for {@link #wrId} and {@link #wcOpcode}: the next one starts after it, as its size says. The caller has checked {@link #outstanding()}; called by the thread polling the send CQ.
     */
    public int flushOldest() {
        int idx = lastPoll & (wqeCnt - 1);
        lastPoll += (int) (slots[metaAt(idx)] >> 8 & 0xff);
        TAIL.setRelease(this, (int) TAIL.getAcquire(this) + 1);
        return idx;
    }

    /** Offset of the control segment of the WQE that producer counter {@code post} names (its slot in the ring). */
    private int ctrlAt(int post) {
        return start + (post & (wqeCnt - 1)) * SendWqeLayout.WQEBB;
    }

    /** The DS count in the control segment at offset {@code ctrlOffset} (qpn_ds bits 5:0, big-endian: its last byte). */
    private int dsAt(int ctrlOffset) {
        return buf.getByte(ctrlOffset + CtrlSeg.QPN_DS_OFFSET + 3) & 0x3f;
    }

    /**
     * This ring driven directly from now on ({@link DirectSq}), from the producer counter it reached. Nothing may be
     * outstanding or pending: the direct queue knows no wr_id, and a CQE of a WR posted here would have none.
     *
     * @throws IllegalStateException if WRs are outstanding, pending or held
     */
    public DirectSq direct() {
        int out = outstanding();
        if (out != 0 || posted != head || held || ctrl >= 0) {
            throw new IllegalStateException(out + " WRs outstanding, " + (posted - head) + " pending"
                    + (held ? ", doorbell held (SQD)" : "") + ": a queue is driven directly only from empty");
        }
        return new DirectSq(buf, start, wqeCnt, qpn, sigBits != 0, dbr, bfreg, curPost);
    }

    /** Back to empty (QP moved to RESET: rdma-core mlx5_init_qp_indices). The record is zeroed by the caller. */
    public void reset() {
        curPost = 0;
        tailSeen = 0;
        posted = 0;
        head = 0;
        lastPoll = 0;
        TAIL.setRelease(this, 0);
        batchCurPost = 0;
        batchPosted = 0;
        nextFence = 0;
        batchNextFence = 0;
        lastInlinePost = -1;
        batchLastInlinePost = -1;
        held = false;
        ctrl = -1;
    }

    private int nextSeg(int size) {
        int n = ds;
        int at = segAt(openCtrl(), n);
        ds = n + size / SendWqeLayout.DS;
        return at;
    }

    /** Offset of the 16-byte unit {@code unit} of the WQE at {@code ctrlOffset}, wrapped to the ring's start. */
    private int segAt(int ctrlOffset, int unit) {
        return start + ((ctrlOffset - start + unit * SendWqeLayout.DS) & ringMask);
    }

    private int openCtrl() {
        int c = ctrl;
        if (c < 0) {
            throw new IllegalStateException("segment written outside an open WQE");
        }
        return c;
    }
}
