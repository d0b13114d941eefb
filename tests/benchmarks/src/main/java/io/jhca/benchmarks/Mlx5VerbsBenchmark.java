package io.jhca.benchmarks;

import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;
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
 * The mlx5 data path through the public verbs API, the way an application drives it: a single-threaded RC QP and
 * CQ of the mlx5 provider on the ConnectX device model, {@code batch} RDMA WRITEs (the last one signaled) posted
 * with the {@link SendQueue} builder ({@code start}, {@code rdmaWrite}, {@code sge}, {@code complete}) or one
 * {@link QueuePair#postSend} chain, one doorbell, then {@link CompletionQueue#poll} into a reused
 * {@link WorkCompletion}. The model's data path is paused and this benchmark writes the CQE of the last WQE
 * itself, as the stub device of {@link Mlx5RingBenchmark} does, so only the driver is timed: the builder's
 * checks, the QPN lookup, the CQ's error and event checks included. The C program it is compared with is
 * {@code src/main/c/mlx5_verbs_baseline.c} (what rdma-core's libmlx5 does per post and per poll).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "-Djhca.mlx5.sim=mlx5_0=127.0.0.65"})
public class Mlx5VerbsBenchmark {
    private static final int SQ_DEPTH = 256;
    private static final int CQ_DEPTH = 255;   // a ring of 256 CQEs, as the ring-level benchmark's

    /** WRs per doorbell. */
    @Param({"1", "8", "32"})
    public int batch;

    /** "builder" (SendQueue start..complete) or "postSend" (a chain of SendWr). */
    @Param({"builder"})
    public String api;

    private PausedModelQp rig;
    private MemoryRegion mr;
    private CompletionQueue cq;
    private QueuePair qp;
    private SendQueue sq;
    private SendWr[] chain;
    private UnsafeBuffer cqRing;
    private int cqEntries;
    private int devicePi;
    private int wqeCounter;
    private boolean postSend;
    private final WorkCompletion wc = new WorkCompletion();
    private long wrId;

    @Setup(Level.Trial)
    public void setUp() {
        rig = new PausedModelQp(CQ_DEPTH, a -> a.maxSendWr(SQ_DEPTH));
        mr = rig.mr;
        cq = rig.cq;
        qp = rig.qp;
        cqRing = rig.cqRing;
        cqEntries = rig.cqEntries;
        sq = qp.sendQueue();
        postSend = "postSend".equals(api);
        chain = new SendWr[batch];
        for (int b = batch - 1; b >= 0; b--) {
            chain[b] = new SendWr(1).opcode(WrOpcode.RDMA_WRITE).rdma(mr.address() + 4096, mr.rkey())
                    .sge(mr, 0, 64).sendFlags(b + 1 == batch ? SendFlags.SIGNALED : 0);
            if (b + 1 < batch) {
                chain[b].next(chain[b + 1]);
            }
        }
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        rig.close();
    }

    /** Operations per sample of {@link #block}. */
    static final int BLOCK = 1000;

    /**
     * {@link #postDoorbellPoll} {@value #BLOCK} times per sample: its median per-operation time is what
     * {@code scripts/bench-mlx5-vs-c} compares with the C baselines' median 1000-operation block, because on a
     * machine shared with other work preemption hits a few samples, not the median one.
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OperationsPerInvocation(BLOCK)
    public long block() {
        long sum = 0;
        for (int i = 0; i < BLOCK; i++) {
            sum += postDoorbellPoll();
        }
        return sum;
    }

    @Benchmark
    public long postDoorbellPoll() {
        if (postSend) {
            for (int b = 0; b < batch; b++) {
                chain[b].wrId(++wrId);
            }
            if (qp.postSend(chain[0]) != batch) {
                throw new IllegalStateException("send queue full");
            }
        } else {
            sq.start();
            long remote = mr.address() + 4096;
            for (int b = 0; b < batch; b++) {
                sq.wrId(++wrId).flags(b + 1 == batch ? SendFlags.SIGNALED : 0).rdmaWrite(mr.rkey(), remote).sge(mr, 0, 64);
            }
            if (sq.complete() != 0) {
                throw new IllegalStateException("send queue full");
            }
        }
        wqeCounter += batch;   // one WQEBB per RDMA WRITE with one SGE
        deviceCompletesLast();
        if (cq.poll(wc) != 1) {
            throw new IllegalStateException("no completion");
        }
        return wc.wrId();
    }

    /** The stub device: the CQE of the last WQE. */
    private void deviceCompletesLast() {
        StubDevice.completeRequest(cqRing, cqEntries, devicePi, wqeCounter - 1, Mlx5Opcode.RDMA_WRITE, qp.qpn(), 64);
        devicePi++;
    }
}
