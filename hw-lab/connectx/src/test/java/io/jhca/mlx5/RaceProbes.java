package io.jhca.mlx5;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.testdev.ScriptedFirmware;
import io.jhca.testkit.ChildJvm;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QueuePair;

/**
 * What the race probes share, which run in a child JVM because the failure they look for is a SIGSEGV: the probe's
 * side (a deadline that dumps every thread, the exit codes the test reads, a QP connected on the scripted device) and
 * the test's side (a seed from a system property or a new one, printed, and the child run with an hs_err file of its
 * own).
 */
final class RaceProbes {

    /** Past this the test kills the child (within JUnit's 60 s); the probe gives up by itself after 40 s. */
    private static final long CHILD_TIMEOUT_SECONDS = 50;
    private static final long DEADLINE_MILLIS = 40_000;

    private RaceProbes() {
    }

    /** A probe's work; what it prints is what the test reads. */
    interface Body {
        void run() throws Exception;
    }

    /**
     * The probe's main: runs {@code body} and exits 0 when it returns, 1 with "FAILED in" {@code state} and the stack
     * when it throws, 3 with every thread's stack when it is still running after 40 s. Never returns.
     */
    static void main(Supplier<String> state, Body body) {
        startWatchdog(state);
        try {
            body.run();
            System.exit(0);
        } catch (Throwable t) {
            System.out.println("FAILED in " + state.get());
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(1);
        }
    }

    private static void startWatchdog(Supplier<String> state) {
        Thread dog = new Thread(() -> {
            try {
                Thread.sleep(DEADLINE_MILLIS);
            } catch (InterruptedException e) {
                return;
            }
            StringBuilder sb = new StringBuilder("DEADLINE " + DEADLINE_MILLIS + " ms passed in " + state.get() + "\n");
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

    /** A probe's device: the scripted function, a PD, a CQ of 1024 and a 64 KiB MR that takes RDMA WRITEs. */
    record Rig(ScriptedFirmware fw, Mlx5Context ctx, ProtectionDomain pd, CompletionQueue cq, MemoryRegion mr) {
        /** Prints the seed (the first line of the probe's output) and opens the rig. */
        static Rig open(long seed) {
            System.out.println("seed " + seed);
            ScriptedFirmware fw = Fixtures.firmware().start();
            Mlx5Context ctx = Fixtures.open(fw);
            ProtectionDomain pd = ctx.allocatePd();
            CompletionQueue cq = ctx.createCq(1024);
            DmaRegion mem = DmaMemory.allocate(DmaOptions.of(65536).lock(false));
            return new Rig(fw, ctx, pd, cq, pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE));
        }
    }

    /** Takes {@code q} to RTS towards {@code peer} on port 1, RDMA WRITE allowed. */
    static void connect(Mlx5Context ctx, QueuePair q, QueuePair peer) {
        q.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        q.modify(QpAttributes.toRtr(peer.qpn(), 0x100 + peer.qpn(), AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1),
                Mtu.MTU_1024));
        q.modify(QpAttributes.toRts(0x100 + q.qpn()));
    }

    /** A child run of a probe: its seed, how to replay it, what it did. */
    record Child(long seed, String seedProperty, ChildJvm.Result result) {
        String replay() {
            return "seed " + seed + " (replay: -D" + seedProperty + "=" + seed + ")";
        }

        /** What the test reports on a failure: the exit codes' meaning, the replay, the child's output. */
        String failure(String what) {
            return what + " (exit 134: SIGSEGV, 1: probe failure, 3: probe deadline), " + replay() + ":\n"
                    + result.output();
        }
    }

    /** Runs {@code probe} in a child JVM with the seed {@code seedProperty} gives, or a new one; prints the seed. */
    static Child run(Class<?> probe, String seedProperty) throws Exception {
        String given = System.getProperty(seedProperty);
        long seed = given != null ? Long.parseLong(given.trim()) : System.nanoTime();
        System.out.println(probe.getSimpleName() + " seed " + seed + " (replay: -D" + seedProperty + "=" + seed + ")");
        ChildJvm.Result result = ChildJvm.run(Duration.ofSeconds(CHILD_TIMEOUT_SECONDS),
                List.of("-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/jhca-" + probe.getSimpleName()
                        + "-hs_err_%p.log"), probe, Long.toString(seed));
        return new Child(seed, seedProperty, result);
    }
}
