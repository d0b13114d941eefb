package io.jhca.benchmarks;

import io.jhca.mlx5.ring.DirectCq;
import io.jhca.mlx5.ring.DirectSq;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.SendFlags;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.util.concurrent.TimeUnit;

/**
 * The mlx5 provider's direct level ({@link DirectSq}, {@link DirectCq}: what rdma-core's mlx5dv gives a C program)
 * doing exactly what the bare C baseline ({@code src/main/c/mlx5_bare_baseline.c}) does: post {@code batch} RDMA
 * WRITE WQEs (the last one signaled), one doorbell, the stub device's CQE of the last WQE, poll it and retire the
 * WQEs it names. The same memory, stub device and bfreg as {@link Mlx5RingBenchmark}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class Mlx5DirectBenchmark {
    /** WQEs per doorbell. */
    @Param({"1", "8", "32"})
    public int batch;

    private StubQueueMemory mem;
    private DirectSq sq;
    private DirectCq cq;
    private UnsafeBuffer cqBuf;
    private int devicePi;

    @Setup(Level.Trial)
    public void setUp() {
        mem = new StubQueueMemory();
        sq = new DirectSq(mem.sqMem.buffer(), 0, StubQueueMemory.SQ_WQEBBS, StubQueueMemory.QPN, false, mem.qpDbr,
                mem.bfreg, 0);
        cqBuf = mem.cqBuf;
        cq = new DirectCq(mem.cq(), n -> null);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        mem.close();
    }

    /** {@link #postDoorbellPoll} {@value Mlx5RingBenchmark#BLOCK} times per sample, as {@link Mlx5RingBenchmark#block}. */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OperationsPerInvocation(Mlx5RingBenchmark.BLOCK)
    public long block() {
        long sum = 0;
        for (int i = 0; i < Mlx5RingBenchmark.BLOCK; i++) {
            sum += postDoorbellPoll();
        }
        return sum;
    }

    @Benchmark
    public long postDoorbellPoll() {
        long base = mem.data.address();
        int pi = sq.producer();
        for (int b = 0; b < batch; b++) {
            pi = sq.write(pi, b + 1 == batch ? SendFlags.SIGNALED : 0, base + 64, StubQueueMemory.RKEY,
                    StubQueueMemory.LKEY, base, 64);
        }
        sq.doorbell(pi);
        StubDevice.completeRequest(cqBuf, StubQueueMemory.CQ_ENTRIES, devicePi++, pi - 1, Mlx5Opcode.RDMA_WRITE,
                StubQueueMemory.QPN, 64);
        if (!cq.poll()) {
            throw new IllegalStateException("no CQE");
        }
        sq.retire(cq.wqeCounter());
        return cq.wqeCounter() + cq.byteCount() + cq.qpn();
    }
}
