package io.jhca.tests.harness;

import io.jhca.rxe.wire.Opcode;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.Context;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Mixed traffic from one side of a {@link Harness} to the other, every message checked.
 * <ul>
 * <li>An RC QP pair carries SEND, SEND_WITH_IMM, RDMA WRITE, WRITE_WITH_IMM, READ, FETCH_ADD and CMP_SWP of random
 *     sizes (0 to 3 KiB + 5, up to 4 packets at PMTU 1024): some inline, some gathered from (READ: scattered to) two
 *     SGEs placed in reverse order in memory; every receive scatters into two SGEs, also in reverse order. Each message
 *     must be delivered exactly once and in order with its bytes (a function of its sequence number), each atomic
 *     applied exactly once (the returned values count up by one), each completion right.</li>
 * <li>A UD QP pair carries a datagram every {@value #UD_EVERY} RC messages: each datagram that arrives must be one that
 *     was sent, intact (a duplicating link may deliver one twice: UD does not hide that), and each that does not must
 *     be one a faulty link dropped or corrupted ({@link RxeDevices#lostOnTheWay}).</li>
 * </ul>
 * Everything random (opcodes, sizes, inline, SGE splits, the starting PSNs unless given) comes from one seed.
 */
public final class MixedTraffic {
    private static final int WINDOW = 64;
    private static final int SLOT = 8192;           // a source or READ slot of A: two halves for a reversed two-SGE split
    private static final int HALF = SLOT / 2;
    private static final int MAX_SIZE = 3 * 1024 + 5;
    private static final int INLINE = 64;
    private static final int RECVS = 256;
    private static final int RECV_SLOT = 4096;      // receive slot of B: SGE 0 is its upper half, SGE 1 its lower half
    private static final int RECV_HALF = RECV_SLOT / 2;
    private static final int WRITE_SLOTS = 128;
    private static final int IMM_SLOTS = 512;
    private static final int READ_SRC = 64 * 1024;
    private static final long READ_SEED = 0xBEEF;
    private static final int UD_EVERY = 8;
    private static final int UD_WINDOW = 16;
    private static final int UD_RECVS = 64;
    private static final int UD_SLOT = 1024;
    private static final int UD_MAX = 512;
    private static final int GRH = 40;
    private static final long UD_SEED = 1L << 40;

    private static final int A_SRC = 0;
    private static final int A_READ = WINDOW * SLOT;
    private static final int A_ATOMIC = A_READ + 2 * WINDOW * SLOT;
    private static final int A_BYTES = A_ATOMIC + 2 * WINDOW * 8;
    private static final int B_RECV = 0;
    private static final int B_WRITE = RECVS * RECV_SLOT;
    private static final int B_IMM = B_WRITE + WRITE_SLOTS * RECV_SLOT;
    private static final int B_READ = B_IMM + IMM_SLOTS * RECV_SLOT;
    private static final int B_FAA = B_READ + READ_SRC;
    private static final int B_CAS = B_FAA + 8;
    private static final int B_BYTES = B_CAS + 8;

    /** 40% SEND, 10% SEND_IMM, 15% WRITE, 10% WRITE_IMM, 15% READ, 5% FETCH_ADD, 5% CMP_SWP. */
    private static final WrOpcode[] MIX = {
        WrOpcode.SEND, WrOpcode.SEND, WrOpcode.SEND, WrOpcode.SEND, WrOpcode.SEND, WrOpcode.SEND, WrOpcode.SEND,
        WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE,
        WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ,
        WrOpcode.RDMA_READ, WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.ATOMIC_CMP_AND_SWP};

    /**
     * Every opcode, a third of them READs and atomics: a lost READ response or atomic reply makes the requester go
     * back to an old PSN while the responder is ahead of it, which is what a PSN compare across the wrap must get right.
     */
    private static final WrOpcode[] READ_HEAVY_MIX = {
        WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM,
        WrOpcode.RDMA_READ, WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.ATOMIC_CMP_AND_SWP, WrOpcode.SEND};

    /** The opcode mix of a run. */
    public enum Mix {
        /** 40% SEND, 10% SEND_IMM, 15% WRITE, 10% WRITE_IMM, 15% READ, 5% FETCH_ADD, 5% CMP_SWP. */
        SOAK,
        /** About 45% READs and atomics, the rest SENDs and WRITEs with and without immediate. */
        READ_HEAVY
    }

    /** What a run did. */
    public record Result(String direction, int messages, int psnA, int receives, long faa, long cas, int inline, int split, int udSent,
                         int udReceived, long millis) {
        @Override
        public String toString() {
            return direction + ": " + messages + " RC messages from PSN 0x" + Integer.toHexString(psnA) + " (" + receives + " receives, " + faa
                    + " FETCH_ADD, " + cas + " CMP_SWP, " + inline + " inline, " + split + " two-SGE), " + udReceived + " of "
                    + udSent + " UD datagrams arrived, in " + millis + " ms";
        }
    }

    /** A message in flight. {@code split}: bytes in the first of two SGEs, 0 for one SGE. */
    private record Msg(int seq, WrOpcode op, int size, int remoteOff, long atomicExpect, int split) {
    }

    private MixedTraffic() {
    }

    /**
     * Runs {@code messages} RC messages (and the UD datagrams alongside) on fresh QPs of {@code h}, A's send PSNs
     * starting at {@code startPsn} (negative: random from the seed). Fails, naming the message, on anything wrong;
     * fails if nothing progresses for {@code stall}.
     */
    public static Result run(Harness h, int messages, long seed, int startPsn, Duration stall) {
        return run(h, messages, seed, startPsn, stall, Mix.SOAK, false);
    }

    /**
     * As {@link #run(Harness, int, long, int, Duration)}, with the given opcode mix, from side B to side A if
     * {@code reverse} (so each side's device is both the sender and the receiver of a run).
     */
    public static Result run(Harness h, int messages, long seed, int startPsn, Duration stall, Mix mixKind,
                             boolean reverse) {
        Context from = reverse ? h.b() : h.a();
        Context to = reverse ? h.a() : h.b();
        WrOpcode[] mix = mixKind == Mix.SOAK ? MIX : READ_HEAVY_MIX;
        SplittableRandom rnd = new SplittableRandom(seed);
        int psnA = startPsn >= 0 ? startPsn & 0xFFFFFF : rnd.nextInt(1 << 24);
        Peer a = h.peer(from, PeerSpec.rc().bufferBytes(A_BYTES).maxSendWr(WINDOW).cqDepth(4 * WINDOW)
                .maxInlineData(INLINE).maxSendSge(2), psnA);
        Peer b = h.peer(to, PeerSpec.rc().bufferBytes(B_BYTES).maxRecvWr(RECVS).cqDepth(2 * RECVS).maxRecvSge(2),
                rnd.nextInt(1 << 24));
        // PMTU 1024: up to 4 packets a message. timeout 10 = 4.2 ms: a lost tail costs little; 7 retries: never give up.
        h.connect(a, b, RcParams.defaults().mtu(Mtu.MTU_1024).timeout(10).retryCnt(7).rnrRetry(7).maxRdAtomic(16));
        Peer ua = h.peer(from, PeerSpec.ud().bufferBytes(UD_WINDOW * UD_SLOT).maxSendWr(UD_WINDOW).cqDepth(2 * UD_WINDOW),
                rnd.nextInt(1 << 24));
        Peer ub = h.peer(to, PeerSpec.ud().bufferBytes(UD_RECVS * UD_SLOT).maxRecvWr(UD_RECVS).cqDepth(2 * UD_RECVS),
                rnd.nextInt(1 << 24));
        ua.readyUd();
        ub.readyUd();
        AddressHandle ah = h.track(ua.pd().createAh(ua.avTo(ub)));

        UnsafeBuffer ab = a.buf();
        UnsafeBuffer bb = b.buf();
        Payloads.fill(bb, B_READ, READ_SRC, READ_SEED);
        bb.putLong(B_FAA, 0);
        bb.putLong(B_CAS, 0);
        RecvWr rwr = new RecvWr(2);
        for (int i = 0; i < RECVS; i++) {
            repost(b, rwr, i);
        }
        RecvWr uwr = new RecvWr(1);
        for (int i = 0; i < UD_RECVS; i++) {
            uwr.wrId(i).sge(ub.mr(), (long) i * UD_SLOT, UD_SLOT);
            assertEquals(1, ub.qp().postRecv(uwr), "UD receive " + i);
        }

        ArrayDeque<Msg> inFlight = new ArrayDeque<>();
        ArrayDeque<Msg> toReceive = new ArrayDeque<>();
        int[] lastWriteSeq = new int[WRITE_SLOTS];
        int[] lastWriteSize = new int[WRITE_SLOTS];
        Arrays.fill(lastWriteSeq, -1);
        int[] udSize = new int[messages / UD_EVERY + 2];
        int[] udSeen = new int[udSize.length];
        long faa = 0;
        long cas = 0;
        int posted = 0;
        int sendDone = 0;
        int recvDone = 0;
        int inlineCount = 0;
        int splitCount = 0;
        int udSent = 0;
        int udDone = 0;
        int udReceived = 0;
        long recvSlot = RECVS;
        SendWr wr = new SendWr(2);
        SendWr uds = new SendWr(1);
        WorkCompletion wc = new WorkCompletion();
        long udLostBefore = RxeDevices.lostOnTheWay(from, to, Opcode.TRANSPORT_UD);
        long start = System.nanoTime();
        long lastProgress = start;

        while (sendDone < messages || !toReceive.isEmpty() || udDone < udSent) {
            while (posted < messages && inFlight.size() < WINDOW
                    && (toReceive.isEmpty() || posted - toReceive.peekFirst().seq() < IMM_SLOTS)) {
                int seq = posted++;
                WrOpcode op = mix[rnd.nextInt(mix.length)];
                boolean inline = !op.isAtomic() && op != WrOpcode.RDMA_READ && rnd.nextInt(6) == 0;
                int size = op.isAtomic() ? 8 : inline ? rnd.nextInt(INLINE + 1)
                        : rnd.nextInt(10) == 0 ? rnd.nextInt(MAX_SIZE + 1) : rnd.nextInt(601);
                int split = !inline && !op.isAtomic() && size >= 2 && rnd.nextInt(3) == 0 ? 1 + rnd.nextInt(size - 1) : 0;
                int src = A_SRC + (seq % WINDOW) * SLOT;
                int remoteOff = 0;
                long atomicExpect = 0;
                wr.wrId(seq).opcode(op).sendFlags(SendFlags.SIGNALED | (inline ? SendFlags.INLINE : 0)).immData(seq);
                switch (op) {
                    case SEND, SEND_WITH_IMM -> source(a, wr, ab, src, size, split, seq);
                    case RDMA_WRITE -> {
                        int slot = seq % WRITE_SLOTS;
                        remoteOff = B_WRITE + slot * RECV_SLOT;
                        source(a, wr, ab, src, size, split, seq);
                        wr.rdma(b.addr(remoteOff), b.mr().rkey());
                        lastWriteSeq[slot] = seq;
                        lastWriteSize[slot] = size;
                    }
                    case RDMA_WRITE_WITH_IMM -> {
                        remoteOff = B_IMM + (seq % IMM_SLOTS) * RECV_SLOT;
                        source(a, wr, ab, src, size, split, seq);
                        wr.rdma(b.addr(remoteOff), b.mr().rkey());
                    }
                    case RDMA_READ -> {
                        remoteOff = B_READ + rnd.nextInt(READ_SRC - size + 1);
                        int dst = A_READ + (seq % (2 * WINDOW)) * SLOT;
                        ab.setMemory(dst, SLOT, (byte) 0);
                        sges(a, wr, dst, size, split);
                        wr.rdma(b.addr(remoteOff), b.mr().rkey());
                    }
                    case ATOMIC_FETCH_AND_ADD -> {
                        atomicExpect = faa++;
                        wr.sge(a.mr(), A_ATOMIC + (seq % (2 * WINDOW)) * 8L, 8).atomic(b.addr(B_FAA), b.mr().rkey(), 1, 0);
                    }
                    default -> {
                        atomicExpect = cas++;
                        wr.sge(a.mr(), A_ATOMIC + (seq % (2 * WINDOW)) * 8L, 8)
                                .atomic(b.addr(B_CAS), b.mr().rkey(), atomicExpect, atomicExpect + 1);
                    }
                }
                assertEquals(1, a.qp().postSend(wr), "post of message " + seq);
                inlineCount += inline ? 1 : 0;
                splitCount += split > 0 ? 1 : 0;
                Msg m = new Msg(seq, op, size, remoteOff, atomicExpect, split);
                inFlight.addLast(m);
                if (op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                    toReceive.addLast(m);
                }
                if (seq % UD_EVERY == 0 && udSent - udDone < UD_WINDOW && udSent < udSize.length) {
                    int n = udSent++;
                    int sz = 8 + rnd.nextInt(UD_MAX - 7);
                    udSize[n] = sz;
                    int off = (n % UD_WINDOW) * UD_SLOT;
                    ua.buf().putLong(off, n, ByteOrder.LITTLE_ENDIAN);
                    Payloads.fill(ua.buf(), off + 8, 8, sz - 8, UD_SEED + n);
                    uds.wrId(n).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(ua.mr(), off, sz)
                            .ud(ah, ub.qpn(), Peer.QKEY);
                    assertEquals(1, ua.qp().postSend(uds), "post of datagram " + n);
                }
            }
            boolean idle = true;
            while (a.sendCq().poll(wc) == 1) {
                idle = false;
                Msg m = inFlight.pollFirst();
                if (m == null) {
                    fail("a send completion with nothing in flight: " + wc);
                }
                checkSendCompletion(wc, m, a, ab, bb);
                sendDone++;
            }
            while (b.recvCq().poll(wc) == 1) {
                idle = false;
                Msg m = toReceive.pollFirst();
                if (m == null) {
                    fail("a receive completion no message accounts for (a duplicate delivery?): " + wc);
                }
                checkReceive(wc, m, b, bb);
                recvDone++;
                repost(b, rwr, recvSlot++);
            }
            while (ua.sendCq().poll(wc) == 1) {
                idle = false;
                if (wc.status() != WcStatus.SUCCESS || wc.wrId() != udDone) {
                    fail("UD send completion " + udDone + " is wrong: " + wc);
                }
                udDone++;
            }
            while (ub.recvCq().poll(wc) == 1) {
                idle = false;
                udReceived += checkDatagram(wc, ub, udSize, udSent, udSeen);
                uwr.wrId(wc.wrId()).sge(ub.mr(), wc.wrId() * UD_SLOT, UD_SLOT);
                assertEquals(1, ub.qp().postRecv(uwr), "UD receive repost");
            }
            long now = System.nanoTime();
            if (!idle) {
                lastProgress = now;
            } else {
                if (now - lastProgress > stall.toNanos()) {
                    fail("traffic stalled for " + stall.toMillis() + " ms: " + posted + " posted, " + sendDone
                            + " send completions, " + recvDone + " receives, " + udDone + "/" + udSent
                            + " datagrams, in flight: " + inFlight.peekFirst() + "\n" + RxeDevices.describeCounters(h.a(), h.b())
                            + "\n" + ModelCounterChecks.describe(h.a()) + "\n" + ModelCounterChecks.describe(h.b()));
                }
                h.progress();
                Thread.yield();
            }
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        // late duplicates (of RC messages: none may complete; of datagrams: counted) and the last datagrams
        h.run(Duration.ofMillis(50));
        if (b.recvCq().poll(wc) == 1) {
            fail("a receive beyond the messages sent (a duplicate delivery?): " + wc);
        }
        while (ub.recvCq().poll(wc) == 1) {
            udReceived += checkDatagram(wc, ub, udSize, udSent, udSeen);
        }
        for (int slot = 0; slot < WRITE_SLOTS; slot++) {
            if (lastWriteSeq[slot] >= 0) {
                Payloads.assertPayload(bb, B_WRITE + slot * RECV_SLOT, lastWriteSize[slot], lastWriteSeq[slot],
                        "WRITE slot " + slot + " holds the last message written to it (" + lastWriteSeq[slot] + ")");
            }
        }
        assertEquals(faa, bb.getLong(B_FAA), "FETCH_ADD counter: each of the " + faa + " adds applied exactly once");
        assertEquals(cas, bb.getLong(B_CAS), "CMP_SWP counter: each of the " + cas + " swaps applied exactly once");
        Payloads.assertPayload(bb, B_READ, READ_SRC, READ_SEED, "the READ source is never written");
        // UD has no recovery: every datagram that did not arrive must be one a faulty link dropped or corrupted
        long udLost = RxeDevices.lostOnTheWay(from, to, Opcode.TRANSPORT_UD) - udLostBefore;
        assertTrue(udReceived >= udSent - udLost, "only " + udReceived + " of " + udSent + " UD datagrams arrived, "
                + udLost + " lost by the links");
        return new Result(from.name() + " -> " + to.name(), messages, psnA, recvDone, faa, cas, inlineCount, splitCount, udSent, udReceived, millis);
    }

    /** The payload of message {@code seq} at {@code src} and the WR's SGEs over it (two reversed if {@code split}). */
    private static void source(Peer a, SendWr wr, UnsafeBuffer ab, int src, int size, int split, int seq) {
        if (split > 0) {
            Payloads.fill(ab, src + HALF, 0, split, seq);
            Payloads.fill(ab, src, split, size - split, seq);
        } else {
            Payloads.fill(ab, src, size, seq);
        }
        sges(a, wr, src, size, split);
    }

    private static void sges(Peer a, SendWr wr, int at, int size, int split) {
        if (split > 0) {
            wr.sge(0).set(a.mr(), at + HALF, split);
            wr.sge(1).set(a.mr(), at, size - split);
            wr.numSge(2);
        } else if (size > 0) {
            wr.sge(a.mr(), at, size);
        } else {
            wr.numSge(0);
        }
    }

    private static void checkSendCompletion(WorkCompletion wc, Msg m, Peer a, UnsafeBuffer ab, UnsafeBuffer bb) {
        String what = "message " + m;
        if (wc.status() != WcStatus.SUCCESS || wc.wrId() != m.seq() || wc.opcode() != m.op().completionOpcode()
                || wc.qpNum() != a.qpn()) {
            fail("send completion of " + what + " is wrong: " + wc);
        }
        switch (m.op()) {
            case RDMA_READ -> {
                assertEquals(m.size(), wc.byteLen(), "byte_len of " + what);
                int dst = A_READ + (m.seq() % (2 * WINDOW)) * SLOT;
                if (m.split() > 0) {
                    Payloads.assertSame(bb, m.remoteOff(), ab, dst + HALF, m.split(), "READ data (first SGE) of " + what);
                    Payloads.assertSame(bb, m.remoteOff() + m.split(), ab, dst, m.size() - m.split(),
                            "READ data (second SGE) of " + what);
                } else {
                    Payloads.assertSame(bb, m.remoteOff(), ab, dst, m.size(), "READ data of " + what);
                }
            }
            case ATOMIC_FETCH_AND_ADD, ATOMIC_CMP_AND_SWP -> {
                long got = ab.getLong(A_ATOMIC + (m.seq() % (2 * WINDOW)) * 8);
                if (got != m.atomicExpect()) {
                    fail(what + " returned " + got + ", expected " + m.atomicExpect() + " (an atomic applied twice or lost)");
                }
            }
            default -> {
            }
        }
    }

    private static void checkReceive(WorkCompletion wc, Msg m, Peer b, UnsafeBuffer bb) {
        String what = "receive of message " + m;
        WcOpcode op = m.op() == WrOpcode.RDMA_WRITE_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV;
        boolean imm = m.op() != WrOpcode.SEND;
        if (wc.status() != WcStatus.SUCCESS || wc.opcode() != op || wc.byteLen() != m.size() || wc.qpNum() != b.qpn()
                || imm != ((wc.wcFlags() & WcFlags.WITH_IMM) != 0) || (imm && wc.immData() != m.seq())) {
            fail(what + " is wrong (out of order, duplicated or damaged?): " + wc);
        }
        if (m.op() == WrOpcode.RDMA_WRITE_WITH_IMM) {
            Payloads.assertPayload(bb, m.remoteOff(), m.size(), m.seq(), "WRITE_IMM data of message " + m.seq());
            return;
        }
        int off = B_RECV + (int) (wc.wrId() % RECVS) * RECV_SLOT;
        int first = Math.min(m.size(), RECV_HALF);
        Payloads.assertPayload(bb, off + RECV_HALF, 0, first, m.seq(), what + " (first receive SGE)");
        Payloads.assertPayload(bb, off, first, m.size() - first, m.seq(), what + " (second receive SGE)");
    }

    /** Checks one datagram; returns 1 if it is the first copy of its sequence number, 0 for a duplicate. */
    private static int checkDatagram(WorkCompletion wc, Peer ub, int[] udSize, int udSent, int[] udSeen) {
        if (wc.status() != WcStatus.SUCCESS || wc.opcode() != WcOpcode.RECV || wc.qpNum() != ub.qpn()) {
            fail("UD receive is wrong: " + wc);
        }
        int off = (int) wc.wrId() * UD_SLOT + GRH;
        long n = ub.buf().getLong(off, ByteOrder.LITTLE_ENDIAN);
        if (n < 0 || n >= udSent) {
            fail("a datagram with sequence number " + n + " that was never sent (" + udSent + " sent): " + wc);
        }
        int seq = (int) n;
        assertEquals(GRH + udSize[seq], wc.byteLen(), "byte_len of datagram " + seq + ": " + wc);
        Payloads.assertPayload(ub.buf(), off + 8, 8, udSize[seq] - 8, UD_SEED + seq, "datagram " + seq);
        return udSeen[seq]++ == 0 ? 1 : 0;
    }

    private static void repost(Peer b, RecvWr rwr, long n) {
        int off = B_RECV + (int) (n % RECVS) * RECV_SLOT;
        rwr.wrId(n);
        rwr.sge(0).set(b.mr(), off + RECV_HALF, RECV_HALF);
        rwr.sge(1).set(b.mr(), off, RECV_HALF);
        rwr.numSge(2);
        assertEquals(1, b.qp().postRecv(rwr), "receive repost " + n);
    }
}
