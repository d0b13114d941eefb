package io.jhca.tests.soak;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.RcParams;
import io.jhca.tests.harness.RxeDevices;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;
import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * 100,000 RC messages of mixed opcodes between two rxe devices whose links lose 1%, duplicate 1%, reorder 1% and
 * corrupt 0.1% of the packets in each direction. Every message must be delivered exactly once, in order, with
 * its bytes intact (a sequence number and a CRC-32 in each SEND payload, regenerated payloads everywhere),
 * every atomic applied exactly once (the returned values count up by one), and every completion right.
 */
class FaultSoakTest {
    private static final int MESSAGES = 100_000;
    private static final int WINDOW = 128;
    private static final int SLOT = 4096;
    private static final int RECVS = 512;
    private static final int WRITE_SLOTS = 256;
    private static final int IMM_SLOTS = 1024;
    private static final int READ_SRC = 64 * 1024;
    private static final long READ_SEED = 0xBEEF;

    // A's buffer: send sources [0, WINDOW*SLOT), read destinations after, atomic results after.
    private static final int A_SRC = 0;
    private static final int A_READ = WINDOW * SLOT;
    private static final int A_ATOMIC = A_READ + 2 * WINDOW * SLOT;
    private static final int A_BYTES = A_ATOMIC + 2 * WINDOW * 8;
    // B's buffer: receive slots, plain-WRITE slots, WRITE_IMM slots, a read-only source, two counters.
    private static final int B_RECV = 0;
    private static final int B_WRITE = RECVS * SLOT;
    private static final int B_IMM = B_WRITE + WRITE_SLOTS * SLOT;
    private static final int B_READ = B_IMM + IMM_SLOTS * SLOT;
    private static final int B_FAA = B_READ + READ_SRC;
    private static final int B_CAS = B_FAA + 8;
    private static final int B_BYTES = B_CAS + 8;

    private static final WrOpcode[] MIX = mix();

    /** 40% SEND, 10% SEND_IMM, 15% WRITE, 10% WRITE_IMM, 15% READ, 5% FETCH_ADD, 5% CMP_SWP. */
    private static WrOpcode[] mix() {
        WrOpcode[] m = new WrOpcode[20];
        int i = 0;
        for (int k = 0; k < 8; k++) {
            m[i++] = WrOpcode.SEND;
        }
        m[i++] = WrOpcode.SEND_WITH_IMM;
        m[i++] = WrOpcode.SEND_WITH_IMM;
        for (int k = 0; k < 3; k++) {
            m[i++] = WrOpcode.RDMA_WRITE;
        }
        m[i++] = WrOpcode.RDMA_WRITE_WITH_IMM;
        m[i++] = WrOpcode.RDMA_WRITE_WITH_IMM;
        for (int k = 0; k < 3; k++) {
            m[i++] = WrOpcode.RDMA_READ;
        }
        m[i++] = WrOpcode.ATOMIC_FETCH_AND_ADD;
        m[i] = WrOpcode.ATOMIC_CMP_AND_SWP;
        return m;
    }

    /** A message in flight: what A posted, so each completion can be checked against it. */
    private record Msg(int seq, WrOpcode op, int size, int remoteOff, long atomicExpect) {
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES) // safety net only; the run takes far less
    void hundredThousandMessagesUnderFaults() {
        DevicePair pair = RxeDevices.faultyPair("soak-a", "soak-b", "127.0.0.31", "127.0.0.32",
                0.01, 0.01, 0.01, 0.001, 20240601L);
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().bufferBytes(A_BYTES).maxSendWr(WINDOW).cqDepth(4 * WINDOW));
            Peer b = h.peerB(PeerSpec.rc().bufferBytes(B_BYTES).maxRecvWr(RECVS).cqDepth(2 * RECVS));
            // PMTU 1024: messages up to 3 KiB span up to 4 packets (and fit a 4 KiB slot).
            // timeout 10 = 4.2 ms: a lost tail packet costs little; retry_cnt/rnr_retry 7: never give up.
            h.connect(a, b, RcParams.defaults().mtu(Mtu.MTU_1024).timeout(10).retryCnt(7).rnrRetry(7).maxRdAtomic(16));
            int maxSize = 3 * 1024 + 5;
            UnsafeBuffer ab = a.buf();
            UnsafeBuffer bb = b.buf();
            Payloads.fill(bb, B_READ, READ_SRC, READ_SEED);
            bb.putLong(B_FAA, 0);
            bb.putLong(B_CAS, 0);
            RecvWr rwr = new RecvWr(1);
            for (int i = 0; i < RECVS; i++) {
                repost(b, rwr, i);
            }

            SplittableRandom rnd = new SplittableRandom(42);
            ArrayDeque<Msg> inFlight = new ArrayDeque<>();   // A's WRs awaiting their send completion, in order
            ArrayDeque<Msg> toReceive = new ArrayDeque<>();  // messages B must see on its receive CQ, in order
            int[] lastWriteSeq = new int[WRITE_SLOTS];
            int[] lastWriteSize = new int[WRITE_SLOTS];
            Arrays.fill(lastWriteSeq, -1);
            long faa = 0;
            long cas = 0;
            int posted = 0;
            int sendDone = 0;
            int recvDone = 0;
            long recvSlot = RECVS;
            SendWr wr = new SendWr(1);
            WorkCompletion wc = new WorkCompletion();
            CRC32 crc = new CRC32();
            byte[] body = new byte[maxSize];
            long start = System.nanoTime();
            long deadline = start + TimeUnit.MINUTES.toNanos(3);

            while (sendDone < MESSAGES || !toReceive.isEmpty()) {
                // Post while the window allows and no WRITE_IMM slot still awaiting its check would be reused.
                while (posted < MESSAGES && inFlight.size() < WINDOW
                        && (toReceive.isEmpty() || posted - toReceive.peekFirst().seq() < IMM_SLOTS)) {
                    int seq = posted++;
                    WrOpcode op = MIX[rnd.nextInt(MIX.length)];
                    int size = op.isAtomic() ? 8 : rnd.nextInt(10) == 0 ? rnd.nextInt(maxSize + 1) : rnd.nextInt(Math.min(maxSize, 600) + 1);
                    int src = A_SRC + (seq % WINDOW) * SLOT;
                    int remoteOff = 0;
                    long atomicExpect = 0;
                    wr.wrId(seq).opcode(op).sendFlags(SendFlags.SIGNALED).immData(seq);
                    switch (op) {
                        case SEND, SEND_WITH_IMM -> {
                            stamp(ab, src, size, seq, crc, body);
                            wr.sge(a.mr(), src, size);
                        }
                        case RDMA_WRITE -> {
                            int slot = seq % WRITE_SLOTS;
                            remoteOff = B_WRITE + slot * SLOT;
                            Payloads.fill(ab, src, size, seq);
                            wr.sge(a.mr(), src, size).rdma(b.addr(remoteOff), b.mr().rkey());
                            lastWriteSeq[slot] = seq;
                            lastWriteSize[slot] = size;
                        }
                        case RDMA_WRITE_WITH_IMM -> {
                            remoteOff = B_IMM + (seq % IMM_SLOTS) * SLOT;
                            Payloads.fill(ab, src, size, seq);
                            wr.sge(a.mr(), src, size).rdma(b.addr(remoteOff), b.mr().rkey());
                        }
                        case RDMA_READ -> {
                            remoteOff = B_READ + rnd.nextInt(READ_SRC - size + 1);
                            int dst = A_READ + (seq % (2 * WINDOW)) * SLOT;
                            ab.setMemory(dst, size, (byte) 0);
                            wr.sge(a.mr(), dst, size).rdma(b.addr(remoteOff), b.mr().rkey());
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
                    if (size == 0 && !op.isAtomic()) {
                        wr.numSge(0);
                    }
                    assertEquals(1, a.qp().postSend(wr), "post of message " + seq);
                    Msg m = new Msg(seq, op, size, remoteOff, atomicExpect);
                    inFlight.addLast(m);
                    if (op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                        toReceive.addLast(m);
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
                    long slot = wc.wrId();
                    checkReceive(wc, m, b, bb, slot, crc, body);
                    recvDone++;
                    repost(b, rwr, recvSlot++);
                }
                if (idle) {
                    if (System.nanoTime() - deadline > 0) {
                        fail("soak stalled: " + posted + " posted, " + sendDone + " send completions, " + recvDone
                                + " receives, in flight: " + inFlight.peekFirst() + "\n" + RxeDevices.describeCounters(h.a(), h.b()));
                    }
                    h.progress();
                    Thread.yield();
                }
            }
            long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
            h.assertNoCompletion(b.recvCq(), Duration.ofMillis(100), "no receive beyond the messages sent (no duplicate delivery)");

            for (int slot = 0; slot < WRITE_SLOTS; slot++) {
                if (lastWriteSeq[slot] >= 0) {
                    Payloads.assertPayload(bb, B_WRITE + slot * SLOT, lastWriteSize[slot], lastWriteSeq[slot],
                            "WRITE slot " + slot + " holds the last message written to it (" + lastWriteSeq[slot] + ")");
                }
            }
            assertEquals(faa, bb.getLong(B_FAA), "FETCH_ADD counter: each of the " + faa + " adds applied exactly once");
            assertEquals(cas, bb.getLong(B_CAS), "CMP_SWP counter: each of the " + cas + " swaps applied exactly once");
            Payloads.assertPayload(bb, B_READ, READ_SRC, READ_SEED, "the READ source is never written");

            String counters = RxeDevices.describeCounters(h.a(), h.b());
            System.out.println("soak: " + MESSAGES + " messages (" + recvDone + " receives, " + faa + " FETCH_ADD, " + cas
                    + " CMP_SWP) in " + millis + " ms under faults\n" + counters);
            RxeDevices.assertFaultsHappened(h.a(), h.b());
        }
    }

    /** SEND payload: bytes [0,8) the sequence number, [8,12) the CRC-32 of the rest, the rest generated from seq. */
    private static void stamp(UnsafeBuffer buf, int off, int size, int seq, CRC32 crc, byte[] body) {
        Payloads.fill(buf, off, size, seq);
        if (size >= 12) {
            buf.putLong(off, seq, ByteOrder.LITTLE_ENDIAN);
            buf.getBytes(off + 12, body, 0, size - 12);
            crc.reset();
            crc.update(body, 0, size - 12);
            buf.putInt(off + 8, (int) crc.getValue(), ByteOrder.LITTLE_ENDIAN);
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
                Payloads.assertSame(bb, m.remoteOff(), ab, dst, m.size(), "READ data of " + what);
            }
            case ATOMIC_FETCH_AND_ADD, ATOMIC_CMP_AND_SWP -> {
                long got = ab.getLong(A_ATOMIC + (m.seq() % (2 * WINDOW)) * 8);
                if (got != m.atomicExpect()) {
                    fail(what + " returned " + got + ", expected " + m.atomicExpect()
                            + " (an atomic applied twice or lost)");
                }
            }
            default -> {
            }
        }
    }

    private static void checkReceive(WorkCompletion wc, Msg m, Peer b, UnsafeBuffer bb, long slot, CRC32 crc, byte[] body) {
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
        int off = B_RECV + (int) (slot % RECVS) * SLOT;
        if (m.size() >= 12) {
            long seq = bb.getLong(off, ByteOrder.LITTLE_ENDIAN);
            assertEquals(m.seq(), seq, "sequence number carried in " + what);
            bb.getBytes(off + 12, body, 0, m.size() - 12);
            crc.reset();
            crc.update(body, 0, m.size() - 12);
            assertEquals((int) crc.getValue(), bb.getInt(off + 8, ByteOrder.LITTLE_ENDIAN), "CRC-32 carried in " + what);
            Payloads.assertPayload(bb, off + 12, 12, m.size() - 12, m.seq(), what);
        } else {
            Payloads.assertPayload(bb, off, m.size(), m.seq(), what);
        }
    }

    private static void repost(Peer b, RecvWr rwr, long n) {
        rwr.wrId(n).sge(b.mr(), B_RECV + (n % RECVS) * SLOT, SLOT);
        assertEquals(1, b.qp().postRecv(rwr), "receive repost " + n);
    }
}
