package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteOrder;
import java.util.ArrayDeque;
import java.util.SplittableRandom;
import java.util.function.UnaryOperator;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.rxe.link.FaultyLink;
import io.jhca.rxe.link.LinkFaults;
import io.jhca.rxe.transport.RxeCounters;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * Mixed RC traffic over links that drop, duplicate, reorder, delay and corrupt packets in both directions: every
 * message must complete exactly once, in order, with its bytes intact, and every atomic must be applied exactly
 * once (a FETCH_ADD of 1 must return 0, 1, 2, ... in order).
 */
class FaultInjectionTest {

    static final Mtu MTU = Mtu.MTU_1024;
    static final int PMTU = MTU.bytes();
    static final int MESSAGES = 20_000;
    static final int WINDOW = 32;
    static final int SLOTS = 2 * WINDOW;
    static final int SLOT = 4 * PMTU;
    static final int MEM = 1 << 20;
    static final int READ_SOURCE = SLOTS * SLOT; // a fixed block in B that READs copy from
    static final int COUNTER = READ_SOURCE + 4 * SLOT; // FETCH_ADD target in B, 8-byte aligned

    record Msg(long id, WrOpcode op, int size, int slot, long seed) {
    }

    @Test
    void everyMessageExactlyOnceUnderFaults() {
        final LinkFaults faults = new LinkFaults(0.01, 0.01, 0.01, 0.005, 0.005, 200_000L);
        final RxeDeviceConfig ca = Rig.config("faultA", ProgressMode.THREAD).txFaults(faults).rxFaults(faults)
                .faultSeed(11).build();
        final RxeDeviceConfig cb = Rig.config("faultB", ProgressMode.THREAD).txFaults(faults).rxFaults(faults)
                .faultSeed(22).build();
        try (Rig r = new Rig(ca, cb, QpType.RC, MEM, MTU, UnaryOperator.identity(), 8)) {
            // the rig's QPs retry for ever (retry_cnt 7, rnr_retry 7) with a 1 ms local ACK timeout (2^8)
            final UnsafeBuffer memA = r.memA.buffer();
            final UnsafeBuffer memB = r.memB.buffer();
            TrafficTest.fill(memB, READ_SOURCE, 4 * SLOT, 777);
            memB.putLong(COUNTER, 0, ByteOrder.nativeOrder());
            // receive WQEs: one per slot, reposted as they complete
            final ArrayDeque<Integer> recvSlots = new ArrayDeque<>();
            for (int i = 0; i < SLOTS; i++) {
                postRecv(r.qpB, r, i);
                recvSlots.add(i);
            }
            final SplittableRandom rnd = new SplittableRandom(5);
            final ArrayDeque<Msg> outstanding = new ArrayDeque<>();
            final ArrayDeque<Msg> awaitingRecv = new ArrayDeque<>();
            final WorkCompletion wc = new WorkCompletion();
            long fetchAdds = 0;
            long nextToPost = 0;
            long done = 0;
            final long deadline = System.nanoTime() + 120_000_000_000L;
            while (done < MESSAGES) {
                assertTrue(System.nanoTime() < deadline, () -> "stuck: counters A " + r.a.counters() + " B "
                        + r.b.counters());
                while (nextToPost < MESSAGES && outstanding.size() < WINDOW) {
                    final Msg m = next(rnd, nextToPost++);
                    post(r, m);
                    outstanding.add(m);
                    if (m.op == WrOpcode.SEND || m.op == WrOpcode.SEND_WITH_IMM || m.op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                        awaitingRecv.add(m);
                    }
                }
                if (r.cqA.poll(wc) == 1) {
                    final Msg m = outstanding.poll();
                    assertEquals(WcStatus.SUCCESS, wc.status(), () -> wc + " counters A " + r.a.counters());
                    assertEquals(m.id, wc.wrId(), "send completions in order, each once");
                    switch (m.op) {
                        case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> TrafficTest.check(memB, slotOffset(m.slot), m.size, m.seed);
                        case RDMA_READ -> checkRead(memA, memB, m);
                        case ATOMIC_FETCH_AND_ADD -> {
                            assertEquals(fetchAdds, memA.getLong(slotOffset(m.slot), ByteOrder.nativeOrder()),
                                    "FETCH_ADD applied exactly once, in order");
                            fetchAdds++;
                        }
                        default -> { }
                    }
                    done++;
                }
                if (r.cqB.poll(wc) == 1) {
                    final Msg m = awaitingRecv.poll();
                    assertTrue(m != null, () -> "unexpected receive completion " + wc);
                    assertEquals(WcStatus.SUCCESS, wc.status(), wc::toString);
                    final int slot = (int) (wc.wrId() - 1_000_000);
                    assertEquals(m.size, wc.byteLen(), () -> "message " + m);
                    if (m.op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                        assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode());
                        assertEquals((int) m.id, wc.immData());
                    } else {
                        assertEquals(WcOpcode.RECV, wc.opcode());
                        TrafficTest.check(memB, recvOffset(slot), m.size, m.seed);
                        if (m.op == WrOpcode.SEND_WITH_IMM) {
                            assertEquals((int) m.id, wc.immData());
                        }
                    }
                    postRecv(r.qpB, r, slot);
                }
            }
            assertEquals(0, r.cqB.poll(wc), "no extra receive completion");
            assertTrue(awaitingRecv.isEmpty());
            assertEquals(fetchAdds, memB.getLong(COUNTER, ByteOrder.nativeOrder()));
            final FaultyLink la = (FaultyLink) r.a.link();
            final FaultyLink lb = (FaultyLink) r.b.link();
            for (final FaultyLink.Fault f : new FaultyLink.Fault[] {FaultyLink.Fault.DROPPED, FaultyLink.Fault.DUPLICATED,
                FaultyLink.Fault.REORDERED, FaultyLink.Fault.DELAYED, FaultyLink.Fault.CORRUPTED}) {
                assertTrue(la.counter(FaultyLink.Direction.TX, f) + lb.counter(FaultyLink.Direction.RX, f) > 0,
                        "the link really did " + f);
            }
            assertTrue(r.a.counters().get(RxeCounters.Counter.DROP_BAD_ICRC)
                    + r.b.counters().get(RxeCounters.Counter.DROP_BAD_ICRC) > 0, "corrupted packets were caught");
            assertTrue(r.b.counters().get(RxeCounters.Counter.DUPLICATE_REQUEST) > 0);
            System.out.println("fault injection: A " + r.a.counters() + "\n B " + r.b.counters());
        }
    }

    static Msg next(final SplittableRandom rnd, final long n) {
        final int k = rnd.nextInt(100);
        final WrOpcode op = k < 25 ? WrOpcode.SEND : k < 35 ? WrOpcode.SEND_WITH_IMM : k < 60 ? WrOpcode.RDMA_WRITE
                : k < 70 ? WrOpcode.RDMA_WRITE_WITH_IMM : k < 90 ? WrOpcode.RDMA_READ : WrOpcode.ATOMIC_FETCH_AND_ADD;
        final int size = op.isAtomic() ? 8 : rnd.nextInt(4) == 0 ? rnd.nextInt(3) : rnd.nextInt(3 * PMTU + 6);
        return new Msg(n + 1, op, size, (int) (n % SLOTS), rnd.nextLong());
    }

    static int slotOffset(final int slot) {
        return slot * SLOT;
    }

    /** Receive buffers: a second slot array in B's upper half, apart from the WRITE targets. */
    static int recvOffset(final int slot) {
        return MEM / 2 + slot * SLOT;
    }

    static void postRecv(final QueuePair qp, final Rig r, final int slot) {
        assertEquals(1, qp.postRecv(new RecvWr().wrId(1_000_000 + slot).sge(r.mrB, recvOffset(slot), SLOT)));
    }

    static void post(final Rig r, final Msg m) {
        final SendWr wr = new SendWr().wrId(m.id).opcode(m.op).sendFlags(SendFlags.SIGNALED).immData((int) m.id);
        switch (m.op) {
            case SEND, SEND_WITH_IMM -> {
                TrafficTest.fill(r.memA.buffer(), slotOffset(m.slot), m.size, m.seed);
                wr.sge(r.mrA, slotOffset(m.slot), m.size);
            }
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM -> {
                TrafficTest.fill(r.memA.buffer(), slotOffset(m.slot), m.size, m.seed);
                wr.sge(r.mrA, slotOffset(m.slot), m.size).rdma(r.mrB.address() + slotOffset(m.slot), r.mrB.rkey());
            }
            case RDMA_READ -> {
                r.memA.buffer().setMemory(slotOffset(m.slot), m.size, (byte) 0);
                wr.sge(r.mrA, slotOffset(m.slot), m.size).rdma(r.mrB.address() + READ_SOURCE + readOffset(m), r.mrB.rkey());
            }
            case ATOMIC_FETCH_AND_ADD -> wr.sge(r.mrA, slotOffset(m.slot), 8)
                    .atomic(r.mrB.address() + COUNTER, r.mrB.rkey(), 1, 0);
            default -> throw new AssertionError(m);
        }
        assertEquals(1, r.qpA.postSend(wr));
    }

    static int readOffset(final Msg m) {
        return (int) ((m.seed & 0x7FFF_FFFFL) % SLOT);
    }

    static void checkRead(final UnsafeBuffer memA, final UnsafeBuffer memB, final Msg m) {
        final int from = READ_SOURCE + readOffset(m);
        for (int i = 0; i < m.size; i++) {
            if (memA.getByte(slotOffset(m.slot) + i) != memB.getByte(from + i)) {
                throw new AssertionError("READ " + m + " byte " + i + " differs");
            }
        }
    }

}
