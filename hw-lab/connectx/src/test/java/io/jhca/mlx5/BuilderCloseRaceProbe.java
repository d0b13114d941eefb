package io.jhca.mlx5;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.VerbsException;

/**
 * Run in a child JVM by {@link BuilderCloseRaceTest}: one thread writes builder batches of RDMA WRITEs in a loop the
 * JIT has compiled while another closes the QP. The builder checks the QP's closed flag per WR with a plain read (a
 * volatile one would be a barrier in the application's loop), so the writer may see another thread's close late, and
 * meanwhile writes WQEs into a ring whose memory the close released. That must never crash the JVM, and every round
 * must end with the builder refusing ("closed"). Each batch is aborted, not completed: its WQEs are written into the
 * ring (mlx5 writes the common WR at its SGE) and the ring's slots are reused, so the writer never waits for the
 * device and keeps writing until the close; the device model is not driven (its engine asserts on a QP reset under
 * it, which a real device ignores). Prints the outcome and exits 0 when both held; any other outcome exits non-zero
 * with what it saw, never spins forever.
 */
public final class BuilderCloseRaceProbe {

    private static final int ROUNDS = 60;
    /** WRs per batch, fewer than the send queue holds. */
    private static final int BATCH = 16;
    /** Batches on a QP nobody closes first, so that the writer's loop runs compiled in the race rounds. */
    private static final int WARM_UP_BATCHES = 20_000;

    private static volatile String state = "starting";

    private BuilderCloseRaceProbe() {
    }

    public static void main(String[] args) {
        RaceProbes.main(() -> state, () -> run(Long.parseLong(args[0])));
    }

    private static void run(long seed) throws InterruptedException {
        RaceProbes.Rig rig = RaceProbes.Rig.open(seed);
        SplittableRandom random = new SplittableRandom(seed);
        Mlx5Context ctx = rig.ctx();
        ProtectionDomain pd = rig.pd();
        MemoryRegion mr = rig.mr();
        QpInitAttributes init = QpInitAttributes.rc(rig.cq(), rig.cq()).maxSendWr(64).maxRecvWr(1);

        state = "warm-up";
        QueuePair warm = pd.createQp(init);
        RaceProbes.connect(ctx, warm, warm);
        write(warm.sendQueue(), mr, WARM_UP_BATCHES);
        warm.close();

        int refused = 0;
        int atOpcode = 0;
        int inRing = 0;
        for (int round = 0; round < ROUNDS; round++) {
            QueuePair qp = pd.createQp(init);
            RaceProbes.connect(ctx, qp, qp);
            long delay = random.nextLong(1, 2_000_000);
            AtomicReference<Throwable> closerFailed = new AtomicReference<>();
            Thread closer = new Thread(() -> {
                LockSupport.parkNanos(delay);
                qp.close();
            }, "closer-" + round);
            closer.setUncaughtExceptionHandler((t, e) -> closerFailed.set(e));
            state = "round " + round + ", closer after " + delay + " ns";
            closer.start();
            try {
                write(qp.sendQueue(), mr, Long.MAX_VALUE);
                throw new IllegalStateException("the writer stopped without a refusal, round " + round);
            } catch (VerbsException e) {
                if (!e.getMessage().contains("closed")) {
                    throw new IllegalStateException("refused for another reason, round " + round, e);
                }
                refused++;
                // where the close was seen: at start(), at an opcode call, or as a write into the released ring
                if (e.getCause() != null) {
                    inRing++;
                } else if (e.getMessage().contains("during the batch")) {
                    atOpcode++;
                }
            }
            closer.join();
            if (closerFailed.get() != null) {
                throw new IllegalStateException("the closer failed, round " + round, closerFailed.get());
            }
        }
        System.out.println("REFUSED " + refused);
        System.out.println("seen at start() " + (refused - atOpcode - inRing) + ", at an opcode call " + atOpcode
                + ", in the ring's bounds check " + inRing);
    }

    /**
     * Writes {@code batches} batches and aborts each, or stops when the builder refuses by throwing: the loop the JIT
     * compiles during the warm-up and runs compiled afterwards.
     */
    private static void write(SendQueue sq, MemoryRegion mr, long batches) {
        for (long n = 0; n < batches; n++) {
            sq.start();
            for (int k = 0; k < BATCH; k++) {
                sq.wrId(n * BATCH + k).flags(k + 1 == BATCH ? SendFlags.SIGNALED : 0)
                        .rdmaWrite(mr.rkey(), mr.address() + 4096).sge(mr, 0, 64);
            }
            sq.abort();
        }
    }
}
