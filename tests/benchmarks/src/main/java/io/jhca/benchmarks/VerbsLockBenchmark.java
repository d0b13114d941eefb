package io.jhca.benchmarks;

import io.jhca.verbs.WorkCompletion;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The price of the threading contract at the verbs level, on one thread: a shared QP and CQ (locked) against
 * single-threaded ones (owner check only). {@code batch}: start, one RDMA WRITE with an SGE, abort (the ring
 * is left as it was, so the operation repeats forever without a device); {@code pollEmpty}: one poll of an empty
 * CQ. An rxe device in CALLER mode that is never progressed keeps everything else out of the numbers.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class VerbsLockBenchmark {

    /** "shared" (the default objects, locking) or "single" (created single-threaded). */
    @Param({"shared", "single"})
    public String threading;

    private IdleRxeQp rig;
    private final WorkCompletion wc = new WorkCompletion();
    private long wrId;

    @Setup(Level.Trial)
    public void setUp() {
        rig = new IdleRxeQp("lockbench", "127.0.0.63", "single".equals(threading));
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        rig.close();
    }

    @Benchmark
    public long batch() {
        return rig.batch(++wrId);
    }

    @Benchmark
    public int pollEmpty() {
        return rig.pollEmpty(wc);
    }
}
