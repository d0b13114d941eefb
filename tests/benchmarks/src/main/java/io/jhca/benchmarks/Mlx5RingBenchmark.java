package io.jhca.benchmarks;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.ring.CqPoller;
import io.jhca.mlx5.ring.CqBuffer;
import io.jhca.mlx5.ring.CqeOwner;
import io.jhca.mlx5.ring.RqBuffer;
import io.jhca.mlx5.ring.SqBuffer;
import io.jhca.mlx5.wqe.Mlx5Opcode;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
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
 * The CPU cost of the mlx5 provider's ring code (below the verbs layer), against plain memory with a stub
 * device side, so that only the driver is timed. One operation is exactly what the bare C baseline
 * ({@code src/main/c/mlx5_bare_baseline.c}) does with rdma-core's mlx5dv.h helpers: post {@code batch}
 * WQEs (the last one signaled), ring one doorbell (DBR, fence, 8-byte doorbell to the current bfreg half),
 * the stub device writes the CQE of the last WQE (body, then op_own with the owner bit), the driver polls it.
 * {@code scripts/bench-mlx5-vs-c} runs both and prints the Java/C ratio; {@link Mlx5VerbsBenchmark} is the same
 * operation through the public verbs API.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class Mlx5RingBenchmark implements CqeOwner {
    private static final int QPN = StubQueueMemory.QPN;
    private static final int LKEY = StubQueueMemory.LKEY;
    private static final int RKEY = StubQueueMemory.RKEY;
    private static final int CQ_ENTRIES = StubQueueMemory.CQ_ENTRIES;

    /** WQEs per doorbell. */
    @Param({"1", "8", "32"})
    public int batch;

    /** RDMA_WRITE (the C baseline's WQE), SEND, RDMA_READ, ATOMIC_FA, or SEND_INLINE (64 bytes copied into the WQE). */
    @Param({"RDMA_WRITE"})
    public String opcode;

    /**
     * How the WQE is written: "oneCall" ({@code SqBuffer.writeOneSge}, the whole WQE of one SGE in one call, what
     * postSend uses for such WRs) or "segments" (begin, raddr, data, finish, what the builder and every other WR
     * use). Inline and atomic WQEs always go by segments.
     */
    @Param({"oneCall"})
    public String writer;

    private StubQueueMemory mem;
    private DmaRegion data;
    private SqBuffer sq;
    private CqBuffer cq;
    private CqPoller poller;
    private UnsafeBuffer cqBuf;
    private UnsafeBuffer payload;
    private final WorkCompletion wc = new WorkCompletion();
    private int mlx5Opcode;
    private WcOpcode wcOpcode;
    private boolean rdma;
    private boolean atomic;
    private boolean inline;
    private int devicePi;
    private boolean oneCall;

    @Setup(Level.Trial)
    public void setUp() {
        mem = new StubQueueMemory();
        data = mem.data;
        payload = new UnsafeBuffer(new byte[64]);
        int wqebbs = StubQueueMemory.SQ_WQEBBS;
        sq = new SqBuffer(mem.sqMem.buffer(), 0, wqebbs, wqebbs / 4, QPN, false, mem.qpDbr, mem.bfreg, SqBuffer.BF_OFF);
        cqBuf = mem.cqBuf;
        cq = mem.cq();
        poller = new CqPoller(cq, n -> n == QPN ? this : null);
        oneCall = "oneCall".equals(writer) && !opcode.equals("SEND_INLINE") && !opcode.equals("ATOMIC_FA");
        switch (opcode) {
            case "RDMA_WRITE": set(Mlx5Opcode.RDMA_WRITE, WcOpcode.RDMA_WRITE, true, false, false); break;
            case "SEND": set(Mlx5Opcode.SEND, WcOpcode.SEND, false, false, false); break;
            case "SEND_INLINE": set(Mlx5Opcode.SEND, WcOpcode.SEND, false, false, true); break;
            case "RDMA_READ": set(Mlx5Opcode.RDMA_READ, WcOpcode.RDMA_READ, true, false, false); break;
            case "ATOMIC_FA": set(Mlx5Opcode.ATOMIC_FA, WcOpcode.FETCH_ADD, true, true, false); break;
            default: throw new IllegalArgumentException("opcode " + opcode);
        }
    }

    private void set(int op, WcOpcode wcOp, boolean rdma, boolean atomic, boolean inline) {
        this.mlx5Opcode = op;
        this.wcOpcode = wcOp;
        this.rdma = rdma;
        this.atomic = atomic;
        this.inline = inline;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        mem.close();
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
        long base = data.address();
        if (oneCall) {
            for (int b = 0; b < batch; b++) {
                sq.writeOneSge(mlx5Opcode, wcOpcode, b, b + 1 == batch ? SendFlags.SIGNALED : 0, 0, rdma, base + 64, RKEY,
                        LKEY, base, 64);
            }
        } else {
            postBySegments(base);
        }
        sq.ringDoorbell();
        deviceCompletesLast();
        if (poller.poll(wc) != 1) {
            throw new IllegalStateException("no CQE");
        }
        return wc.wrId();
    }

    private void postBySegments(long base) {
        for (int b = 0; b < batch; b++) {
            int flags = b + 1 == batch ? SendFlags.SIGNALED : 0;
            sq.begin(mlx5Opcode, wcOpcode, b, flags, 0);
            if (rdma) {
                sq.raddr(base + 64, RKEY);
            }
            if (atomic) {
                sq.atomic(1, 0);
                sq.data(LKEY, base, 8);
            } else if (inline) {
                sq.inline(payload, 0, 64);
            } else {
                sq.data(LKEY, base, 64);
            }
            sq.finish();
        }
    }

    /** The stub device: the CQE of the last WQE. */
    private void deviceCompletesLast() {
        StubDevice.completeRequest(cqBuf, CQ_ENTRIES, devicePi, sq.curPost() - 1, mlx5Opcode, QPN, 64);
        devicePi++;
    }

    @Override
    public int qpn() {
        return QPN;
    }

    @Override
    public SqBuffer sendRing() {
        return sq;
    }

    @Override
    public RqBuffer recvRing() {
        return null;
    }

    @Override
    public boolean isUd() {
        return false;
    }

    @Override
    public void onErrorCompletion(boolean requester, WcStatus status) {
        throw new IllegalStateException("error CQE in a benchmark: " + status);
    }
}
