package io.jhca.mlx5.ring;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WorkCompletion;

/**
 * The software flush of a dead device's rings: after WQEs of one and two WQEBBs (some continuing at slot 0), some
 * executed and polled, some executed but retired by no CQE (unsignaled after the last signaled one) and some never
 * executed, {@link SqBuffer#flushOldest} walks exactly the outstanding WRs in posting order, by the control segments'
 * DS counts, and {@link RqBuffer#flushOldest} the outstanding receives.
 */
class SoftwareFlushTest {

    private final WorkCompletion wc = new WorkCompletion();

    @Test
    void flushWalksExactlyTheOutstandingWrsInOrder() {
        long seed = System.nanoTime();
        System.out.println("SoftwareFlushTest seed " + seed);
        Random rnd = new Random(seed);
        for (int round = 0; round < 200; round++) {
            String where = "seed " + seed + " round " + round;
            try (RingFixture f = new RingFixture(8, 4, 8, 5, 16, SqBuffer.BF_OFF)) {
                DmaRegion dst = f.dma(4096);
                byte[] payload = new byte[100];
                long id = 0;
                // executed and polled: the ring positions wrap to a random place
                int warm = rnd.nextInt(12);
                for (int i = 0; i < warm; i++) {
                    f.rq.begin(10_000 + i);
                    f.rq.sge(1, dst.address(), 128);
                    f.rq.finish();
                    f.rq.ringDoorbell();
                    post(f, id++, SendFlags.SIGNALED, 1 + rnd.nextInt(90), payload);
                    f.sq.ringDoorbell();
                    assertEquals(1, f.engine.process(), where);
                    assertEquals(1, f.sendPoller.poll(wc), where);
                    assertEquals(1, f.recvPoller.poll(wc), where);
                }
                List<Long> expected = new ArrayList<>();
                // executed, but the last ones unsignaled: no CQE retires them
                int executed = rnd.nextInt(3);
                int signaledUpTo = executed == 0 ? -1 : rnd.nextInt(executed + 1) - 1;
                for (int i = 0; i < executed; i++) {
                    f.rq.begin(20_000 + i);
                    f.rq.sge(1, dst.address(), 128);
                    f.rq.finish();
                    f.rq.ringDoorbell();
                    long w = id++;
                    post(f, w, i == signaledUpTo ? SendFlags.SIGNALED : 0, 1 + rnd.nextInt(90), payload);
                    if (i > signaledUpTo) {
                        expected.add(w);
                    }
                }
                f.sq.ringDoorbell();
                f.engine.process();
                if (signaledUpTo >= 0) {
                    assertEquals(1, f.sendPoller.poll(wc), where);
                }
                assertEquals(0, f.sendPoller.poll(wc), where);
                while (f.recvPoller.poll(wc) == 1) {
                    // the receives of those sends
                }
                // posted, never executed (the device died first)
                int pending = rnd.nextInt(5 - executed + (signaledUpTo + 1));
                for (int i = 0; i < pending && !f.sq.full(); i++) {
                    long w = id++;
                    post(f, w, rnd.nextBoolean() ? SendFlags.SIGNALED : 0, 1 + rnd.nextInt(90), payload);
                    expected.add(w);
                }
                f.sq.ringDoorbell();
                int recvs = rnd.nextInt(8);
                List<Long> expectedRecv = new ArrayList<>();
                for (int i = 0; i < recvs; i++) {
                    f.rq.begin(30_000 + i);
                    f.rq.sge(1, dst.address(), 128);
                    f.rq.finish();
                    expectedRecv.add(30_000L + i);
                }
                f.rq.ringDoorbell();

                assertEquals(expected.size(), f.sq.outstanding(), where);
                List<Long> flushed = new ArrayList<>();
                while (f.sq.outstanding() > 0) {
                    int slot = f.sq.flushOldest();
                    flushed.add(f.sq.wrId(slot));
                    assertEquals(WcOpcode.SEND, f.sq.wcOpcode(slot), where);
                }
                assertEquals(expected, flushed, where);
                assertEquals(f.sq.head(), f.sq.tail(), where);
                assertEquals(expectedRecv.size(), f.rq.outstanding(), where);
                List<Long> rflushed = new ArrayList<>();
                while (f.rq.outstanding() > 0) {
                    rflushed.add(f.rq.flushOldest());
                }
                assertEquals(expectedRecv, rflushed, where);
            }
        }
    }

    /** A SEND with {@code len} inline bytes: 2 DS (one WQEBB) up to 12 bytes, more above. */
    private static void post(RingFixture f, long wrId, int flags, int len, byte[] payload) {
        f.sq.startBatch();
        f.sq.begin(Mlx5Opcode.SEND, WcOpcode.SEND, wrId, flags | SendFlags.INLINE, 0);
        f.sq.inline(new UnsafeBuffer(payload), 0, len);
        f.sq.finish();
    }
}
