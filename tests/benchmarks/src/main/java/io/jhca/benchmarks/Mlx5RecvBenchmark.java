package io.jhca.benchmarks;

import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.WorkCompletion;
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
 * The mlx5 receive path through the public API, the counterpart of {@link Mlx5VerbsBenchmark}'s send path: one
 * operation posts a chain of {@code batch} receive WRs of one SGE ({@code postRecv}: its checks, the RQ WQEs, the
 * doorbell record), the stub device completes each with a responder CQE (a SEND of 64 bytes, as a ConnectX writes
 * it), and the application polls the {@code batch} completions into a reused {@link WorkCompletion}. On the
 * ConnectX model with its data path paused, single-threaded QP and CQ, so only the driver is timed. Its C baselines
 * are {@code src/main/c/mlx5_verbs_baseline.c}'s "recv" mode (the QP's receive queue) and "srq" mode (an SRQ), which
 * {@code scripts/bench-mlx5-vs-c} pairs with it.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED", "-Djhca.mlx5.sim=mlx5_0=127.0.0.65"})
public class Mlx5RecvBenchmark {
    private static final int RQ_DEPTH = 256;
    private static final int CQ_DEPTH = 255;   // a ring of 256 CQEs
    /** The SRQ's WQEs: max_wr 255 takes a ring of 256 (rdma-core's align_queue_size(max_wr + 1)). */
    private static final int SRQ_WQES = 256;

    /** Receive WRs per postRecv (and completions polled per operation). */
    @Param({"1", "8", "32"})
    public int batch;

    /**
     * Where the receives go: "qp", the QP's own receive queue, or "srq", a shared receive queue of max_wr 255 the QP
     * takes its receives from (a ring of 256 WQEs; completed in order, the k-th receive lands in WQE k mod 256).
     */
    @Param({"qp"})
    public String queue;

    private PausedModelQp rig;
    private SharedReceiveQueue srq;
    private MemoryRegion mr;
    private CompletionQueue cq;
    private QueuePair qp;
    private RecvWr[] chain;
    private UnsafeBuffer cqRing;
    private int cqEntries;
    private int devicePi;
    private int rqCounter;
    private final WorkCompletion wc = new WorkCompletion();
    private long wrId;

    @Setup(Level.Trial)
    public void setUp() {
        rig = "srq".equals(queue) ? new PausedModelQp(CQ_DEPTH, SRQ_WQES - 1, a -> a)
                : new PausedModelQp(CQ_DEPTH, a -> a.maxRecvWr(RQ_DEPTH));
        srq = rig.srq;
        mr = rig.mr;
        cq = rig.cq;
        qp = rig.qp;
        cqRing = rig.cqRing;
        cqEntries = rig.cqEntries;
        chain = new RecvWr[batch];
        for (int b = batch - 1; b >= 0; b--) {
            chain[b] = new RecvWr(1).sge(mr, 64L * b, 64);
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

    /** {@link #postPoll} {@value #BLOCK} times per sample (see {@link Mlx5VerbsBenchmark#block}). */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OperationsPerInvocation(BLOCK)
    public long block() {
        long sum = 0;
        for (int i = 0; i < BLOCK; i++) {
            sum += postPoll();
        }
        return sum;
    }

    @Benchmark
    public long postPoll() {
        for (int b = 0; b < batch; b++) {
            chain[b].wrId(++wrId);
        }
        if ((srq != null ? srq.postRecv(chain[0]) : qp.postRecv(chain[0])) != batch) {
            throw new IllegalStateException("receive queue full");
        }
        if (srq != null) {
            for (int b = 0; b < batch; b++) {
                StubDevice.completeSrqRecv(cqRing, cqEntries, devicePi++, rqCounter++ & (SRQ_WQES - 1), qp.qpn(),
                        srq.srqn(), 64);
            }
        } else {
            for (int b = 0; b < batch; b++) {
                StubDevice.completeRecv(cqRing, cqEntries, devicePi++, rqCounter++, qp.qpn(), 64);
            }
        }
        long sum = 0;
        long first = wrId - batch + 1;
        for (int b = 0; b < batch; b++) {
            if (cq.poll(wc) != 1 || wc.wrId() != first + b || wc.byteLen() != 64) {
                throw new IllegalStateException("completion " + b + " of the batch missing or not the WR posted");
            }
            sum += wc.wrId();
        }
        return sum;
    }
}
