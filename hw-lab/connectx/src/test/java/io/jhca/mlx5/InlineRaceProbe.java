package io.jhca.mlx5;

import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.testdev.ScriptedFirmware;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
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
    /** The whole run takes about a second; past this the probe dumps its threads and exits (the test waits longer). */
    private static final long DEADLINE_MILLIS = 40_000;

    private static volatile String state = "starting";

    private InlineRaceProbe() {
    }

    public static void main(String[] args) {
        startWatchdog();
        try {
            run(Long.parseLong(args[0]));
            System.exit(0);
        } catch (Throwable t) {
            System.out.println("FAILED in " + state);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
    }

    private static void run(long seed) throws InterruptedException {
        System.out.println("seed " + seed);
        SplittableRandom random = new SplittableRandom(seed);
        ScriptedFirmware fw = Fixtures.firmware().start();
        Mlx5Context ctx = Fixtures.open(fw);
        ProtectionDomain pd = ctx.allocatePd();
        CompletionQueue cq = ctx.createCq(1024);
        DmaRegion dst = DmaMemory.allocate(DmaOptions.of(65536).lock(false));
        MemoryRegion dstMr = pd.register(dst, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        QpInitAttributes init = QpInitAttributes.rc(cq, cq).maxSendWr(64).maxRecvWr(1).maxInlineData(256);
        QueuePair a = pd.createQp(init);
        QueuePair b = pd.createQp(init);
        connect(ctx, a, b);
        connect(ctx, b, a);
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

    /** Past the deadline: every thread's stack into the output (what the test reports), then exit 3. */
    private static void startWatchdog() {
        Thread dog = new Thread(() -> {
            try {
                Thread.sleep(DEADLINE_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            StringBuilder sb = new StringBuilder("DEADLINE " + DEADLINE_MILLIS + " ms passed in " + state + "\n");
            for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
                sb.append('"').append(e.getKey().getName()).append("\" ").append(e.getKey().getState()).append('\n');
                for (StackTraceElement f : e.getValue()) {
                    sb.append("    at ").append(f).append('\n');
                }
            }
            System.out.print(sb);
            System.out.flush();
            Runtime.getRuntime().halt(3);
        }, "probe-watchdog");
        dog.setDaemon(true);
        dog.start();
    }

    private static void connect(Mlx5Context ctx, QueuePair q, QueuePair peer) {
        q.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        q.modify(QpAttributes.toRtr(peer.qpn(), 0x100 + peer.qpn(), AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1),
                Mtu.MTU_1024));
        q.modify(QpAttributes.toRts(0x100 + q.qpn()));
    }
}
