package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcOpcode;

/**
 * {@link SqBuffer#writeOneSge} writes exactly the bytes, and keeps exactly the bookkeeping, of the
 * segment-by-segment path (begin, raddr, data, finish) that the golden vectors cover: two rings, the same random WRs
 * (opcode, flags, imm, addresses, keys, zero-length SGEs) through each, compared byte for byte over the whole send
 * ring after every WR, around the ring more than twice. Seed printed; -Djhca.onesge.seed=N replays it.
 */
class OneSgeWqeTest {

    private static final int[] OPCODES = {Mlx5Opcode.SEND, Mlx5Opcode.SEND_IMM, Mlx5Opcode.RDMA_WRITE,
            Mlx5Opcode.RDMA_WRITE_IMM, Mlx5Opcode.RDMA_READ};
    private static final WcOpcode[] WC = {WcOpcode.SEND, WcOpcode.SEND, WcOpcode.RDMA_WRITE, WcOpcode.RDMA_WRITE,
            WcOpcode.RDMA_READ};

    @Test
    void sameBytesAndBookkeepingAsTheSegmentPath() {
        twoRings("", 40, (r, a, b, ringBytes, i, seed) -> {
            Wr w = Wr.random(r);
            int lkey = r.nextInt();
            long addr = r.nextLong();
            int length = randomLength(r);
            String what = "WR " + i + " (seed " + seed + ")";

            w.begin(a);
            a.data(lkey, addr, length);
            a.finish();
            w.writeOneSge(b, lkey, addr, length);

            assertEquals(hex(a.buffer(), a.start(), ringBytes), hex(b.buffer(), b.start(), ringBytes), what);
            assertEquals(a.curPost(), b.curPost(), what);
            assertEquals(a.pending(), b.pending(), what);
            int slot = a.curPost() - 1;
            assertEquals(a.wrId(slot), b.wrId(slot), what);
            assertEquals(a.wcOpcode(slot), b.wcOpcode(slot), what);
            if (r.nextBoolean()) {   // doorbells and retirements in between, so head, tail and wqe_head move too
                a.ringDoorbell();
                b.ringDoorbell();
                a.retire(slot);
                b.retire(slot);
                assertEquals(a.tail(), b.tail(), what);
                assertEquals(a.head(), b.head(), what);
            }
        });
    }

    /**
     * A one-call WQE opened again ({@link SqBuffer#reopenLast}, the builder's WR that gets a second SGE) and given one
     * or two more data segments, then closed, is byte for byte and counter for counter the WQE the segment path writes
     * for the whole WR, including WQEs that grow past their WQEBB at the ring's end and wrap to its start.
     */
    @Test
    void aReopenedWqeEndsAsTheSegmentPathWritesIt() {
        twoRings("reopen ", 60, (r, a, b, ringBytes, i, seed) -> {
            Wr w = Wr.random(r);
            int sges = 2 + r.nextInt(2);
            int[] lkey = new int[sges];
            long[] addr = new long[sges];
            int[] length = new int[sges];
            for (int g = 0; g < sges; g++) {
                lkey[g] = r.nextInt();
                addr[g] = r.nextLong();
                length[g] = randomLength(r);
            }
            String what = "WR " + i + " of " + sges + " SGEs (seed " + seed + ")";

            w.begin(a);
            for (int g = 0; g < sges; g++) {
                a.data(lkey[g], addr[g], length[g]);
            }
            a.finish();
            w.writeOneSge(b, lkey[0], addr[0], length[0]);
            b.reopenLast();
            for (int g = 1; g < sges; g++) {
                b.data(lkey[g], addr[g], length[g]);
            }
            b.finish();

            assertEquals(hex(a.buffer(), a.start(), ringBytes), hex(b.buffer(), b.start(), ringBytes), what);
            assertEquals(a.curPost(), b.curPost(), what);
            assertEquals(a.pending(), b.pending(), what);
            a.ringDoorbell();
            b.ringDoorbell();
            assertThrows(IllegalStateException.class, b::reopenLast, "published: nothing to reopen, " + what);
            if (a.outstanding() >= 4 || r.nextInt(3) == 0) {
                // a software flush walks the WQEs by the sizes they were closed with: both walks must agree
                while (a.outstanding() > 0) {
                    int wqe = a.flushOldest();
                    assertEquals(wqe, b.flushOldest(), "flushed WQE, " + what);
                    assertEquals(a.wrId(wqe), b.wrId(wqe), what);
                }
                assertEquals(0, b.outstanding(), what);
            }
        });
    }

    @Test
    void refusedWhileAWqeIsOpen() {
        try (RingFixture f = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, 1, 0, 0);
            assertThrows(IllegalStateException.class,
                    () -> f.sq.writeOneSge(Mlx5Opcode.SEND, WcOpcode.SEND, 2, 0, 0, false, 0, 0, 1, 4096, 8));
        }
    }

    /** One step of a two-ring comparison: WR {@code i}, the segment path's ring {@code a}, the one-call ring {@code b}. */
    private interface Step {
        void run(Random r, SqBuffer a, SqBuffer b, int ringBytes, int i, long seed);
    }

    /** Runs {@code step} for {@code wrs} WRs over two fresh rings, with a printed, replayable seed. */
    private static void twoRings(String what, int wrs, Step step) {
        long seed = Long.getLong("jhca.onesge.seed", System.nanoTime());
        System.out.println("OneSgeWqeTest " + what + "seed " + seed + " (replay with -Djhca.onesge.seed=" + seed + ")");
        Random r = new Random(seed);
        try (RingFixture segments = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF);
             RingFixture oneCall = new RingFixture(16, 16, 16, 6, 64, SqBuffer.BF_OFF)) {
            for (int i = 0; i < wrs; i++) {
                step.run(r, segments.sq, oneCall.sq, segments.sq.wqeCnt() * 64, i, seed);
            }
        }
    }

    /** A random plain WR's control and remote address fields; its SGEs come on their own. */
    private record Wr(int k, int flags, int imm, long raddr, int rkey, long wrId) {
        static Wr random(Random r) {
            int k = r.nextInt(OPCODES.length);
            int flags = r.nextInt(8) & (SendFlags.SIGNALED | SendFlags.SOLICITED | SendFlags.FENCE);
            int imm = OPCODES[k] == Mlx5Opcode.SEND_IMM || OPCODES[k] == Mlx5Opcode.RDMA_WRITE_IMM ? r.nextInt() : 0;
            return new Wr(k, flags, imm, r.nextLong(), r.nextInt(), r.nextLong());
        }

        boolean rdma() {
            return OPCODES[k] != Mlx5Opcode.SEND && OPCODES[k] != Mlx5Opcode.SEND_IMM;
        }

        /** The segment path up to the data segments: begin, and raddr for RDMA. */
        void begin(SqBuffer sq) {
            sq.begin(OPCODES[k], WC[k], wrId, flags, imm);
            if (rdma()) {
                sq.raddr(raddr, rkey);
            }
        }

        void writeOneSge(SqBuffer sq, int lkey, long addr, int length) {
            sq.writeOneSge(OPCODES[k], WC[k], wrId, flags, imm, rdma(), raddr, rkey, lkey, addr, length);
        }
    }

    /** An SGE length: 0 one time in four (skipped by both paths), else up to 1 MiB. */
    private static int randomLength(Random r) {
        return r.nextInt(4) == 0 ? 0 : 1 + r.nextInt(1 << 20);
    }

    private static String hex(UnsafeBuffer buf, int offset, int length) {
        StringBuilder sb = new StringBuilder(length * 2);
        for (int i = 0; i < length; i++) {
            sb.append(String.format("%02x", buf.getByte(offset + i) & 0xff));
            if ((i & 15) == 15) {
                sb.append('\n');
            }
        }
        return sb.toString();
    }
}
