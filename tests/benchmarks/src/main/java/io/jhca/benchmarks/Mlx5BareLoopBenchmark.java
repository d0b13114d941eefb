package io.jhca.benchmarks;

import io.jhca.doorbell.Fences;
import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.ring.CqBuffer;
import org.agrona.UnsafeApi;
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
 * The bare C baseline's loop ({@code src/main/c/mlx5_bare_baseline.c}) line for line in Java, in its four modes: the
 * language against C on the same work, apart from the driver. One operation: {@code batch} RDMA WRITE WQEs (control,
 * remote address and data segment, the last one signaled), the doorbell record, the 8-byte doorbell between the
 * driver's two MMIO fences ({@link Fences}), the stub device's CQE ({@link StubDevice}, as the C loop's
 * {@code stub_device.h}), its poll; with {@code wrid} also each WQE's wr_id and WR number, and per CQE the wr_id
 * looked up, the tail and a completion cleared and filled. {@code params}: "constant" takes the ring sizes, QPN and
 * keys as compile-time constants as the C loop does by default; "runtime" reads them from fields when the operation
 * starts, as the C loop's "rt" mode and any driver's ring do. Like the C loop, and unlike
 * {@link Mlx5RingBenchmark}'s ring, it checks no bounds: its offsets are masked and nothing outside it reaches them.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class Mlx5BareLoopBenchmark {
    private static final int SQ_WQEBBS = 1024;
    private static final int CQ_ENTRIES = 256;
    private static final int QPN = 0x11;
    private static final int LKEY = 0x100;
    private static final int RKEY = 0x200;
    private static final int RDMA_WRITE = 0x08;
    private static final int CQ_UPDATE = 0x08;
    private static final int CQE_INVALID = 0xf;

    @Param({"1", "8", "32"})
    public int batch;

    /** "constant" or "runtime": see the class comment. */
    @Param({"constant", "runtime"})
    public String params;

    /** Keep the wr_ids and WR numbers (the C loop's "wrid" mode). */
    @Param({"false", "true"})
    public boolean wrid;

    private DmaRegion sqMem;
    private DmaRegion cqMem;
    private DmaRegion dbrMem;
    private DmaRegion uarMem;
    private DmaRegion data;
    private long sq;
    private long cq;
    private UnsafeBuffer cqBuf;
    private long dbr;
    private long cqDbr;
    private long uar;
    private long buf;
    private boolean runtime;
    // the "runtime" mode's parameters
    private int wqeCnt = SQ_WQEBBS;
    private int cqEntries = CQ_ENTRIES;
    private int qpn = QPN;
    private int lkey = LKEY;
    private int rkey = RKEY;
    // the loop's state between operations, as the C loop keeps it
    private int curPost;
    private int ci;
    private int bfOffset = 0x800;
    private int head;
    private long it;
    private final long[] wrIds = new long[SQ_WQEBBS];
    private final int[] wqeHead = new int[SQ_WQEBBS];
    private final Wc wc = new Wc();
    private static final int WC_RDMA_WRITE = 1;   // IBV_WC_RDMA_WRITE

    /** struct ibv_wc's fields, cleared and filled per CQE as the C loop's "wrid" mode fills one. */
    static final class Wc {
        long wrId;
        int status;
        int opcode;
        int vendorErr;
        int byteLen;
        int immData;
        int qpNum;
        int srcQp;
        int wcFlags;
        int pkeyIndex;
        int slid;
        int sl;
        int dlidPathBits;

        void clear() {
            wrId = 0;
            status = 0;
            opcode = 0;
            vendorErr = 0;
            byteLen = 0;
            immData = 0;
            qpNum = 0;
            srcQp = 0;
            wcFlags = 0;
            pkeyIndex = 0;
            slid = 0;
            sl = 0;
            dlidPathBits = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        sqMem = DmaMemory.allocate(SQ_WQEBBS * 64);
        cqMem = DmaMemory.allocate(CQ_ENTRIES * 64);
        dbrMem = DmaMemory.allocate(4096);
        uarMem = DmaMemory.allocate(4096);
        data = DmaMemory.allocate(4096);
        sq = sqMem.address();
        cq = cqMem.address();
        dbr = dbrMem.address();
        cqDbr = dbr + 64;
        uar = uarMem.address();
        buf = data.address();
        runtime = params.equals("runtime");
        cqBuf = cqMem.buffer();
        CqBuffer.initialize(cqBuf, CQ_ENTRIES);   // rdma-core's initial op_own
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        sqMem.close();
        cqMem.close();
        dbrMem.close();
        uarMem.close();
        data.close();
    }

    @Benchmark
    @OperationsPerInvocation(Mlx5RingBenchmark.BLOCK)
    public long block() {
        long sum = 0;
        if (runtime) {
            for (int i = 0; i < Mlx5RingBenchmark.BLOCK; i++) {
                sum += operation(wqeCnt, cqEntries, qpn, lkey, rkey);
            }
        } else {
            for (int i = 0; i < Mlx5RingBenchmark.BLOCK; i++) {
                sum += operation(SQ_WQEBBS, CQ_ENTRIES, QPN, LKEY, RKEY);
            }
        }
        return sum;
    }

    /** One operation; with constant arguments the JIT folds them into the instructions, as the C compiler does. */
    private long operation(int wqeCnt, int cqEntries, int qpn, int lkey, int rkey) {
        final int batch = this.batch;
        final boolean keepWrid = wrid;
        final long sq = this.sq;
        final long[] wrIds = this.wrIds;
        final int[] wqeHead = this.wqeHead;
        int cur = curPost;
        int h = head;
        long firstWrId = it * batch;
        long raddr = Long.reverseBytes(buf + 64);
        long rkeyWord = Long.reverseBytes((long) rkey << 32);
        long dataWord = Long.reverseBytes(64L << 32 | (lkey & 0xFFFFFFFFL));
        long addr = Long.reverseBytes(buf);
        long qpnDs = (qpn & 0xffffff) << 8 | 3;
        long ctrl0 = 0;
        for (int b = 0; b < batch; b++) {
            long wqe = sq + ((long) (cur & (wqeCnt - 1)) << 6);
            ctrl0 = Long.reverseBytes((long) (cur & 0xffff) << 40 | (long) RDMA_WRITE << 32 | qpnDs);
            UnsafeApi.putLong(wqe, ctrl0);
            UnsafeApi.putLong(wqe + 8, Long.reverseBytes((long) (b + 1 == batch ? CQ_UPDATE : 0) << 32));
            UnsafeApi.putLong(wqe + 16, raddr);
            UnsafeApi.putLong(wqe + 24, rkeyWord);
            UnsafeApi.putLong(wqe + 32, dataWord);
            UnsafeApi.putLong(wqe + 40, addr);
            if (keepWrid) {
                wrIds[cur & (wqeCnt - 1)] = firstWrId + b;
                wqeHead[cur & (wqeCnt - 1)] = h + b;
            }
            cur++;
        }
        head = h + batch;
        curPost = cur;
        // post_send_db
        Fences.wqeBeforeDoorbellRecord();
        UnsafeApi.putInt(dbr + 4, Integer.reverseBytes(cur & 0xffff));
        Fences.doorbellRecordBeforeMmio();
        UnsafeApi.putLong(uar + bfOffset, ctrl0);
        Fences.flushMmio();
        bfOffset ^= 0x100;
        // the stub device, as the C loop's stub_complete_request: the CQE of the last WQE
        int c = ci;
        StubDevice.completeRequest(cqBuf, cqEntries, c, cur - 1, RDMA_WRITE, qpn, 64);
        long cqe = cq + ((long) (c & (cqEntries - 1)) << 6);
        // the driver: poll it
        int opOwn = UnsafeApi.getByteVolatile(null, cqe + 63) & 0xff;
        if (opOwn >> 4 == CQE_INVALID || ((opOwn & 1) ^ ((c & cqEntries) != 0 ? 1 : 0)) != 0) {
            throw new IllegalStateException("CQE not owned by software at ci=" + c);
        }
        Fences.ownerBeforeCqeBody();
        long sum;
        int sopDropQpn = Integer.reverseBytes(UnsafeApi.getInt(cqe + 56));
        int wqeCounter = Short.reverseBytes(UnsafeApi.getShort(cqe + 60)) & 0xffff;
        if (keepWrid) {
            int idx = wqeCounter & (wqeCnt - 1);
            Wc w = wc;
            w.clear();
            w.wrId = wrIds[idx];
            w.status = 0;
            w.opcode = WC_RDMA_WRITE;
            w.qpNum = sopDropQpn & 0xffffff;
            int sqTail = wqeHead[idx] + 1;
            sum = w.wrId + w.qpNum + sqTail;
        } else {
            sum = wqeCounter + Integer.reverseBytes(UnsafeApi.getInt(cqe + 44)) + (sopDropQpn & 0xffffff);
        }
        ci = c + 1;
        UnsafeApi.putInt(cqDbr, Integer.reverseBytes((c + 1) & 0xffffff));
        it++;
        return sum;
    }
}
