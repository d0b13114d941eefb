package io.jhca.benchmarks;

import io.jhca.verbs.WorkCompletion;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * {@link VerbsLockBenchmark}'s operations on one shared QP and CQ from two threads at once: what the lock of a shared
 * queue costs when it is contended (each thread's time per operation). {@code batch}: start, one RDMA WRITE with an
 * SGE, abort; {@code pollEmpty}: one poll of an empty CQ. An rxe device in CALLER mode that is never progressed.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Threads(2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class VerbsLockContentionBenchmark {

    private IdleRxeQp rig;

    /** Each thread's own completion and wr_id. */
    @State(Scope.Thread)
    public static class PerThread {
        final WorkCompletion wc = new WorkCompletion();
        long wrId;
    }

    @Setup(Level.Trial)
    public void setUp() {
        rig = new IdleRxeQp("lockbench2", "127.0.0.62", false);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        rig.close();
    }

    @Benchmark
    public long batch(PerThread t) {
        return rig.batch(++t.wrId);
    }

    @Benchmark
    public int pollEmpty(PerThread t) {
        return rig.pollEmpty(t.wc);
    }
}
