package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.Stream;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import io.jhca.verbs.Mtu;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * RC traffic between two rxe devices in one JVM: every opcode at the sizes around the path MTU, in both progress
 * modes and both posting styles, bytes checked end to end (and the bytes around the target left alone).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class TrafficTest {

    static final Mtu MTU = Mtu.MTU_1024;
    static final int PMTU = MTU.bytes();
    static final int MEM = 4 << 20;
    /** Where received / written / read data lands. */
    static final int DST = 2 << 20;
    static final int GUARD = 64;

    enum Style { POST_SEND, BUILDER }

    private final Map<ProgressMode, Rig> rigs = new EnumMap<>(ProgressMode.class);
    private long nextId = 1;

    private Rig rig(final ProgressMode mode) {
        return rigs.computeIfAbsent(mode, m -> Rig.rc(m, MEM, MTU));
    }

    @AfterAll
    void closeRigs() {
        for (final Rig r : rigs.values()) {
            r.close();
        }
    }

    static Stream<Arguments> cases() {
        final int[] sizes = {0, 1, PMTU - 1, PMTU, PMTU + 1, 3 * PMTU + 5, 1 << 20};
        final WrOpcode[] ops = {WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE, WrOpcode.RDMA_WRITE_WITH_IMM,
            WrOpcode.RDMA_READ};
        final List<Arguments> out = new ArrayList<>();
        for (final ProgressMode mode : ProgressMode.values()) {
            for (final Style style : Style.values()) {
                for (final WrOpcode op : ops) {
                    for (final int size : sizes) {
                        out.add(Arguments.of(mode, style, op, size));
                    }
                }
            }
        }
        return out.stream();
    }

    @ParameterizedTest(name = "{0} {1} {2} {3} bytes")
    @MethodSource("cases")
    void transfer(final ProgressMode mode, final Style style, final WrOpcode op, final int size) {
        final Rig r = rig(mode);
        final long id = nextId++;
        final boolean read = op == WrOpcode.RDMA_READ;
        // READ pulls B's bytes into A; everything else pushes A's bytes to B
        final UnsafeBuffer src = read ? r.memB.buffer() : r.memA.buffer();
        final UnsafeBuffer dst = read ? r.memA.buffer() : r.memB.buffer();
        fill(src, 0, size, id);
        dst.setMemory(DST - GUARD, size + 2 * GUARD, (byte) 0xEE);
        final boolean needsRecv = op == WrOpcode.SEND || op == WrOpcode.SEND_WITH_IMM || op == WrOpcode.RDMA_WRITE_WITH_IMM;
        if (needsRecv) {
            final RecvWr rw = new RecvWr().wrId(id + 1_000_000);
            if (op == WrOpcode.RDMA_WRITE_WITH_IMM) {
                rw.numSge(0);
            } else {
                rw.sge(r.mrB, DST, size + GUARD); // room to spare
            }
            assertEquals(1, r.qpB.postRecv(rw));
        }
        final int imm = (int) (0xC0DE0000L + id);
        final long raddr = read ? r.mrB.address() : r.mrB.address() + DST;
        final int rkey = r.mrB.rkey();
        final long laddrOffset = read ? DST : 0;
        post(r.qpA, style, op, id, imm, rkey, raddr, r.mrA.lkey(), r.mrA.address() + laddrOffset, size);

        final WorkCompletion sc = r.expect(r.cqA, id, WcStatus.SUCCESS);
        assertEquals(op.completionOpcode(), sc.opcode());
        assertEquals(r.qpA.qpn(), sc.qpNum());
        if (needsRecv) {
            final WorkCompletion rc = r.expect(r.cqB, id + 1_000_000, WcStatus.SUCCESS);
            assertEquals(size, rc.byteLen());
            assertEquals(r.qpB.qpn(), rc.qpNum());
            assertEquals(op == WrOpcode.RDMA_WRITE_WITH_IMM ? WcOpcode.RECV_RDMA_WITH_IMM : WcOpcode.RECV, rc.opcode());
            assertEquals(op.hasImmediate(), (rc.wcFlags() & WcFlags.WITH_IMM) != 0);
            if (op.hasImmediate()) {
                assertEquals(imm, rc.immData());
            }
        }
        check(dst, DST, size, id);
        for (int i = 1; i <= GUARD; i++) {
            assertEquals((byte) 0xEE, dst.getByte(DST - i), "byte before the target changed");
            assertEquals((byte) 0xEE, dst.getByte(DST + size + i - 1), "byte after the target changed");
        }
        r.expectNothing(r.cqB, 0);
    }

    static void post(final QueuePair qp, final Style style, final WrOpcode op, final long id, final int imm,
            final int rkey, final long raddr, final int lkey, final long laddr, final int size) {
        if (style == Style.POST_SEND) {
            final SendWr wr = new SendWr().wrId(id).opcode(op).sendFlags(SendFlags.SIGNALED).immData(imm)
                    .rdma(raddr, rkey);
            if (size == 0) {
                wr.numSge(0);
            } else {
                wr.numSge(1).sge(0).set(laddr, size, lkey);
            }
            assertEquals(1, qp.postSend(wr));
            return;
        }
        final SendQueue sq = qp.sendQueue();
        sq.start().wrId(id).flags(SendFlags.SIGNALED);
        switch (op) {
            case SEND -> sq.send();
            case SEND_WITH_IMM -> sq.sendImm(imm);
            case RDMA_WRITE -> sq.rdmaWrite(rkey, raddr);
            case RDMA_WRITE_WITH_IMM -> sq.rdmaWriteImm(rkey, raddr, imm);
            case RDMA_READ -> sq.rdmaRead(rkey, raddr);
            default -> throw new AssertionError(op);
        }
        sq.sge(lkey, laddr, size); // a zero-length SGE for size 0
        assertEquals(0, sq.complete());
    }

    static void fill(final UnsafeBuffer b, final int at, final int size, final long seed) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < size; i++) {
            b.putByte(at + i, (byte) rnd.nextInt());
        }
    }

    static void check(final UnsafeBuffer b, final int at, final int size, final long seed) {
        final SplittableRandom rnd = new SplittableRandom(seed);
        for (int i = 0; i < size; i++) {
            final byte want = (byte) rnd.nextInt();
            if (b.getByte(at + i) != want) {
                throw new AssertionError("byte " + i + " of " + size + ": got " + b.getByte(at + i) + " want " + want);
            }
        }
    }

    @ParameterizedTest
    @EnumSource(ProgressMode.class)
    void atomics(final ProgressMode mode) {
        final Rig r = rig(mode);
        final UnsafeBuffer target = r.memB.buffer();
        final UnsafeBuffer result = r.memA.buffer();
        final int t = 1 << 20; // 8-byte aligned
        target.putLong(t, 40, java.nio.ByteOrder.nativeOrder());
        for (final Style style : Style.values()) {
            final long base = target.getLong(t, java.nio.ByteOrder.nativeOrder());
            // FETCH_ADD: returns the old value, adds
            atomic(r, style, WrOpcode.ATOMIC_FETCH_AND_ADD, t, 2, 0);
            assertEquals(base, result.getLong(64, java.nio.ByteOrder.nativeOrder()));
            assertEquals(base + 2, target.getLong(t, java.nio.ByteOrder.nativeOrder()));
            // CMP_SWP that matches
            atomic(r, style, WrOpcode.ATOMIC_CMP_AND_SWP, t, base + 2, 1234);
            assertEquals(base + 2, result.getLong(64, java.nio.ByteOrder.nativeOrder()));
            assertEquals(1234, target.getLong(t, java.nio.ByteOrder.nativeOrder()));
            // CMP_SWP that does not match: returns the current value, leaves it
            atomic(r, style, WrOpcode.ATOMIC_CMP_AND_SWP, t, 99, 5678);
            assertEquals(1234, result.getLong(64, java.nio.ByteOrder.nativeOrder()));
            assertEquals(1234, target.getLong(t, java.nio.ByteOrder.nativeOrder()));
            target.putLong(t, base + 2, java.nio.ByteOrder.nativeOrder());
        }
    }

    private void atomic(final Rig r, final Style style, final WrOpcode op, final int targetOffset, final long compareAdd,
            final long swap) {
        final long id = nextId++;
        r.memA.buffer().putLong(64, -1L);
        final long raddr = r.mrB.address() + targetOffset;
        if (style == Style.POST_SEND) {
            final SendWr wr = new SendWr().wrId(id).opcode(op).sendFlags(SendFlags.SIGNALED)
                    .atomic(raddr, r.mrB.rkey(), compareAdd, swap).sge(r.mrA, 64, 8);
            assertEquals(1, r.qpA.postSend(wr));
        } else {
            final SendQueue sq = r.qpA.sendQueue().start().wrId(id).flags(SendFlags.SIGNALED);
            if (op == WrOpcode.ATOMIC_FETCH_AND_ADD) {
                sq.atomicFetchAdd(r.mrB.rkey(), raddr, compareAdd);
            } else {
                sq.atomicCmpSwp(r.mrB.rkey(), raddr, compareAdd, swap);
            }
            sq.sge(r.mrA, 64, 8);
            assertEquals(0, sq.complete());
        }
        final WorkCompletion wc = r.expect(r.cqA, id, WcStatus.SUCCESS);
        assertEquals(op.completionOpcode(), wc.opcode());
        assertEquals(8, wc.byteLen());
        assertTrue(wc.isSuccess());
    }
}
