package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.function.UnaryOperator;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpType;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/** A 64 MiB SEND, WRITE and READ: streamed by path MTU (16384 packets each), bytes checked. */
class LargeMessageTest {

    static final int SIZE = 64 << 20;

    @Test
    void sixtyFourMebibytes() {
        final long t0 = System.nanoTime();
        try (Rig r = new Rig(Rig.config("bigA", ProgressMode.THREAD).build(), Rig.config("bigB", ProgressMode.THREAD).build(),
                QpType.RC, 2L * SIZE, Mtu.MTU_4096, UnaryOperator.identity())) {
            final UnsafeBuffer a = r.memA.buffer();
            final UnsafeBuffer b = r.memB.buffer();
            fill(a, 0, 1);
            r.qpB.postRecv(new RecvWr().wrId(10).sge(r.mrB, 0, SIZE));
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, SIZE));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            assertEquals(SIZE, r.expect(r.cqB, 10, WcStatus.SUCCESS).byteLen());
            check(b, 0, 1);
            final long t1 = System.nanoTime();

            fill(a, SIZE, 2);
            r.qpA.postSend(new SendWr().wrId(2).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, SIZE, SIZE).rdma(r.mrB.address() + SIZE, r.mrB.rkey()));
            r.expect(r.cqA, 2, WcStatus.SUCCESS);
            check(b, SIZE, 2);
            final long t2 = System.nanoTime();

            fill(b, 0, 3);
            r.qpA.postSend(new SendWr().wrId(3).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, SIZE).rdma(r.mrB.address(), r.mrB.rkey()));
            r.expect(r.cqA, 3, WcStatus.SUCCESS);
            check(a, 0, 3);
            final long t3 = System.nanoTime();
            System.out.printf("64 MiB over rxe loopback, MTU 4096: SEND %.0f MB/s, WRITE %.0f MB/s, READ %.0f MB/s%n",
                    SIZE / ((t1 - t0) / 1e3), SIZE / ((t2 - t1) / 1e3), SIZE / ((t3 - t2) / 1e3));
            System.out.println("counters A " + r.a.counters() + "\n B " + r.b.counters());
        }
    }

    static void fill(final UnsafeBuffer buf, final int at, final long seed) {
        for (int i = 0; i < SIZE; i += 8) {
            buf.putLong(at + i, mix(seed * 0x9E3779B97F4A7C15L + i));
        }
    }

    static void check(final UnsafeBuffer buf, final int at, final long seed) {
        for (int i = 0; i < SIZE; i += 8) {
            final long want = mix(seed * 0x9E3779B97F4A7C15L + i);
            if (buf.getLong(at + i) != want) {
                throw new AssertionError("64 MiB message differs at byte " + i);
            }
        }
    }

    static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
