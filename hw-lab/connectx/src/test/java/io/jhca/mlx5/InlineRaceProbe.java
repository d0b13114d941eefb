package io.jhca.mlx5;

import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.testdev.ScriptedFirmware;
import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * Run in a child JVM by {@link InlineRaceTest}: one thread posts INLINE RDMA WRITEs whose bytes come from an MR
 * while another deregisters that MR and closes its region. The QP copies inline bytes at post time; copying
 * from the unmapped region kills the JVM with SIGSEGV. Prints the outcome and exits 0 when nothing crashed and
 * every round ended with the post refused; any other outcome exits non-zero with what it saw, never spins forever.
 */
public final class InlineRaceProbe {

    /** A signaled WR every this many posted WRs, fewer than the send queue holds (asserted below). */
    private static final int SIGNAL_EVERY = 16;
    /** Queue-full posts in a row after which nothing completed: the send queue can no longer drain. */
    private static final int MAX_STALLS = 10_000;

    private static volatile String state = "starting";

    private InlineRaceProbe() {
    }

    public static void main(String[] args) {
        RaceProbes.main(() -> state, () -> run(Long.parseLong(args[0])));
    }

    private static void run(long seed) throws InterruptedException {
        RaceProbes.Rig rig = RaceProbes.Rig.open(seed);
        SplittableRandom random = new SplittableRandom(seed);
        ScriptedFirmware fw = rig.fw();
        Mlx5Context ctx = rig.ctx();
        ProtectionDomain pd = rig.pd();
        CompletionQueue cq = rig.cq();
        MemoryRegion dstMr = rig.mr();
        QpInitAttributes init = QpInitAttributes.rc(cq, cq).maxSendWr(64).maxRecvWr(1).maxInlineData(256);
        QueuePair a = pd.createQp(init);
        QueuePair b = pd.createQp(init);
        RaceProbes.connect(ctx, a, b);
        RaceProbes.connect(ctx, b, a);
        if (a.capabilities().maxSendWr() < SIGNAL_EVERY) {
            throw new IllegalStateException("send queue of " + a.capabilities().maxSendWr() + " WRs: a queue full of"
                    + " unsignaled WRs would never drain");
        }
        WorkCompletion wc = new WorkCompletion();
        int refused = 0;
        long posted = 0;
        // Counts posted WRs across rounds, not attempts: a CQE retires its WQE and the unsignaled ones before it,
        // so the send queue must never fill with unsignaled WQEs only, else it stays full for ever. Counting
        // attempts (refused ones too) or restarting per round let that happen (the old hang: postSend returning 0).
        int unsignaled = 0;
        for (int round = 0; round < 100; round++) {
            DmaRegion src = DmaMemory.allocate(DmaOptions.of(65536).lock(false));
            MemoryRegion mr = pd.register(src, Access.LOCAL_WRITE);
            long delay = random.nextLong(1, 300_000);
            AtomicReference<Throwable> closerFailed = new AtomicReference<>();
            Thread closer = new Thread(() -> {
                LockSupport.parkNanos(delay);
                mr.close();
                src.close();
            }, "closer-" + round);
            // a closer that throws leaves the MR registered: the posts would succeed for ever
            closer.setUncaughtExceptionHandler((t, e) -> closerFailed.set(e));
            SendWr wr = new SendWr().opcode(WrOpcode.RDMA_WRITE).rdma(dstMr.address(), dstMr.rkey())
                    .sendFlags(SendFlags.INLINE).sge(mr, 0, 256);
            state = "round " + round + ", closer after " + delay + " ns";
            closer.start();
            try {
                int stalls = 0;
                for (long i = 0; ; i++) {
                    boolean signaled = unsignaled == SIGNAL_EVERY - 1;
                    wr.wrId(i).sendFlags(SendFlags.INLINE | (signaled ? SendFlags.SIGNALED : 0));
                    boolean gone = mr.isClosed();
                    if (a.postSend(wr) == 0) {
                        fw.process();
                        int done = 0;
                        while (cq.poll(wc) == 1) {
                            done++;
                            if (!wc.isSuccess()) {
                                throw new IllegalStateException("error completion " + wc);
                            }
                        }
                        stalls = done == 0 ? stalls + 1 : 0;
                        if (stalls > MAX_STALLS || closerFailed.get() != null) {
                            throw new IllegalStateException("send queue full and nothing completes, MR closed "
                                    + mr.isClosed() + ", round " + round + ", closer " + closer.getState(),
                                    closerFailed.get());
                        }
                    } else {
                        if (gone) {
                            // the real bug this probe looks for: inline bytes copied from a deregistered MR
                            throw new IllegalStateException("post accepted after its MR was deregistered, round "
                                    + round + ", WR " + i);
                        }
                        if (closerFailed.get() != null) {
                            throw new IllegalStateException("the closer failed, round " + round, closerFailed.get());
                        }
                        unsignaled = signaled ? 0 : unsignaled + 1;
                        posted++;
                    }
                }
            } catch (VerbsException e) {
                refused++;   // the MR is gone: the post names the lkey that no longer exists
            }
            closer.join();
            if (closerFailed.get() != null) {
                throw new IllegalStateException("the closer failed, round " + round, closerFailed.get());
            }
        }
        System.out.println("REFUSED " + refused + " POSTED " + posted);
    }
}
