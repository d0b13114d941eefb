package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.jhca.verbs.fake.FakeQp;
import io.jhca.verbs.fake.RecordingSendQueue;

/**
 * What the send builder hands its provider for each WR, against what the calls said, as rdma-core's {@code ibv_wr_*}
 * defines it: the wr_id and send flags set before the opcode call (a change after it is for the next WR), the
 * immediate only for an opcode that carries one, the remote address only for RDMA and atomics, then every SGE or
 * inline piece in order. Random batches (seed printed, {@code -Djhca.builder.seed}) of every plain and atomic opcode
 * with 0-4 SGEs (zero-length ones among them) or inline data, wr_id and flags changed before, between and after the
 * opcode calls, some batches aborted; each is given to a provider that takes the common WR when it closes and to one
 * that takes it at its first SGE and reopens it for a second.
 */
class BuilderWrStateTest extends VerbsTestSupport {
    private static final WrOpcode[] OPS = {WrOpcode.SEND, WrOpcode.SEND_WITH_IMM, WrOpcode.RDMA_WRITE,
        WrOpcode.RDMA_WRITE_WITH_IMM, WrOpcode.RDMA_READ, WrOpcode.ATOMIC_FETCH_AND_ADD, WrOpcode.ATOMIC_CMP_AND_SWP};
    private static final int MAX_SGE = 4;
    private ProtectionDomain pd;
    private CompletionQueue cq;

    @BeforeEach
    void resources() {
        pd = track(ctx.allocatePd());
        cq = track(ctx.createCq(64));
    }

    private RecordingSendQueue recording(boolean writeAtFirstSge) {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendSge(MAX_SGE).maxInlineData(64));
        return ((FakeQp) qp).recordSends(writeAtFirstSge);
    }

    @Test
    void eachWrReachesTheProviderAsItsCallsSaidEitherWay() {
        long seed = Long.getLong("jhca.builder.seed", System.nanoTime());
        System.out.println("BuilderWrStateTest seed " + seed + " (replay: -Djhca.builder.seed=" + seed + ")");
        Random r = new Random(seed);
        RecordingSendQueue atClose = recording(false);
        RecordingSendQueue atFirstSge = recording(true);
        SendQueue[] both = {atClose, atFirstSge};
        UnsafeBuffer src = new UnsafeBuffer(new byte[256]);
        List<String> expected = new ArrayList<>();
        long wrId = 0;
        int flags = 0;
        for (int batch = 0; batch < 3000; batch++) {
            for (SendQueue sq : both) {
                sq.start();
            }
            List<String> wrs = new ArrayList<>();
            int n = 1 + r.nextInt(6);
            for (int i = 0; i < n; i++) {
                if (r.nextBoolean()) {
                    wrId = r.nextLong();
                    for (SendQueue sq : both) {
                        sq.wrId(wrId);
                    }
                }
                if (r.nextInt(3) == 0) {
                    flags = r.nextInt(8);   // FENCE, SIGNALED, SOLICITED
                    for (SendQueue sq : both) {
                        sq.flags(flags);
                    }
                }
                WrOpcode op = OPS[r.nextInt(OPS.length)];
                int imm = r.nextInt();
                int rkey = r.nextInt();
                long raddr = r.nextLong() & ~7L;
                long compareAdd = r.nextLong();
                long swap = r.nextLong();
                for (SendQueue sq : both) {
                    opcodeCall(sq, op, imm, rkey, raddr, compareAdd, swap);
                }
                StringBuilder wr = new StringBuilder(RecordingSendQueue.wr(op, wrId, flags, op.hasImmediate() ? imm : 0,
                        op.isRdma() ? rkey : 0, op.isRdma() ? raddr : 0, op.isAtomic() ? compareAdd : 0,
                        op == WrOpcode.ATOMIC_CMP_AND_SWP ? swap : 0));
                boolean inline = !op.isAtomic() && op != WrOpcode.RDMA_READ && r.nextInt(4) == 0;
                int pieces = op.isAtomic() ? 1 : r.nextInt(inline ? 3 : MAX_SGE + 1);
                for (int p = 0; p < pieces; p++) {
                    if (r.nextInt(5) == 0) {   // wr_id and flags after the opcode call: the next WR's
                        wrId = r.nextLong();
                        flags = r.nextInt(8);
                        for (SendQueue sq : both) {
                            sq.wrId(wrId).flags(flags);
                        }
                    }
                    if (inline) {
                        int offset = r.nextInt(64);
                        int length = r.nextInt(32);   // two pieces within max_inline_data 64
                        for (SendQueue sq : both) {
                            sq.inlineData(src, offset, length);
                        }
                        wr.append(" inline=").append(offset).append('+').append(length);
                    } else {
                        int lkey = r.nextInt();
                        long addr = r.nextLong();
                        int length = op.isAtomic() ? 8 : r.nextInt(4) == 0 ? 0 : r.nextInt(1 << 20);
                        for (SendQueue sq : both) {
                            sq.sge(lkey, addr, length);
                        }
                        wr.append(RecordingSendQueue.sgeText(lkey, addr, length));
                    }
                }
                wrs.add(wr.toString());
            }
            boolean abort = r.nextInt(10) == 0;
            for (SendQueue sq : both) {
                if (abort) {
                    sq.abort();
                } else {
                    assertEquals(0, sq.complete(), "seed " + seed);
                }
            }
            if (!abort) {
                expected.addAll(wrs);
            }
            assertEquals(expected, atClose.posted, "taken at the close, batch " + batch + ", seed " + seed);
            assertEquals(expected, atFirstSge.posted, "taken at the first SGE, batch " + batch + ", seed " + seed);
        }
    }

    private static void opcodeCall(SendQueue sq, WrOpcode op, int imm, int rkey, long raddr, long compareAdd, long swap) {
        switch (op) {
            case SEND: sq.send(); break;
            case SEND_WITH_IMM: sq.sendImm(imm); break;
            case RDMA_WRITE: sq.rdmaWrite(rkey, raddr); break;
            case RDMA_WRITE_WITH_IMM: sq.rdmaWriteImm(rkey, raddr, imm); break;
            case RDMA_READ: sq.rdmaRead(rkey, raddr); break;
            case ATOMIC_FETCH_AND_ADD: sq.atomicFetchAdd(rkey, raddr, compareAdd); break;
            case ATOMIC_CMP_AND_SWP: sq.atomicCmpSwp(rkey, raddr, compareAdd, swap); break;
            default: throw new AssertionError(op);
        }
    }
}
