package io.jhca.benchmarks;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaRegion;
import io.jhca.rxe.ProgressMode;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Context;
import io.jhca.verbs.CqFlags;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
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
 * One full RDMA WRITE through the rxe provider: post with the builder, the requester segments and sends over
 * UDP on loopback, the peer's responder places the bytes and ACKs, the completer completes, the CQ is polled.
 * With {@code progress=CALLER} both devices are driven from this one thread, so the score is the CPU cost of a
 * round trip through both stacks and two kernel UDP hops, and {@code -prof gc} shows whether any of it allocates.
 * With {@code progress=THREAD} (the default of the tools) each device has its engine thread and this thread only
 * posts and spins on the CQ: a peer that writes and waits for each completion, from a side that never answers.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class RxeWriteRoundTripBenchmark {

    @Param({"64", "4096"})
    public int size;

    /** CALLER: this thread drives both devices; THREAD: their engine threads do. */
    @Param({"CALLER", "THREAD"})
    public ProgressMode progress;

    /** progress == CALLER: this thread drives both devices. */
    private boolean caller;
    private Context a;
    private Context b;
    private ProtectionDomain pdA;
    private ProtectionDomain pdB;
    private DmaRegion memA;
    private DmaRegion memB;
    private MemoryRegion mrA;
    private MemoryRegion mrB;
    private CompletionQueue cqA;
    private CompletionQueue cqB;
    private QueuePair qpA;
    private QueuePair qpB;
    private SendQueue sq;
    private final WorkCompletion wc = new WorkCompletion();
    private long wrId;

    @Setup(Level.Trial)
    public void setUp() {
        a = RxeProvider.open(RxeDeviceConfig.builder("bench0").address("127.0.0.61").progressMode(progress).build());
        b = RxeProvider.open(RxeDeviceConfig.builder("bench1").address("127.0.0.62").progressMode(progress).build());
        pdA = a.allocatePd();
        pdB = b.allocatePd();
        memA = DmaMemory.allocate(1 << 16);
        memB = DmaMemory.allocate(1 << 16);
        mrA = pdA.register(memA, Access.LOCAL_WRITE);
        mrB = pdB.register(memB, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
        caller = progress == ProgressMode.CALLER;
        int cqFlags = caller ? CqFlags.SINGLE_THREADED : 0;   // driven from one thread: single-threaded, no locks
        cqA = a.createCq(64, cqFlags);
        cqB = b.createCq(64, cqFlags);
        qpA = pdA.createQp(singleThreadedIfCaller(QpInitAttributes.rc(cqA, cqA).maxSendWr(16)));
        qpB = pdB.createQp(singleThreadedIfCaller(QpInitAttributes.rc(cqB, cqB).maxRecvWr(16)));
        connect(qpA, a, qpB, b);
        connect(qpB, b, qpA, a);
        sq = qpA.sendQueue();
    }

    private static void connect(QueuePair qp, Context local, QueuePair peer, Context remote) {
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
        qp.modify(QpAttributes.toRtr(peer.qpn(), 0, AhAttributes.to(remote.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_4096));
        qp.modify(QpAttributes.toRts(0));
    }

    /** A QP driven from this one thread alone (caller progress) is single-threaded: no locks. */
    private QpInitAttributes singleThreadedIfCaller(QpInitAttributes attr) {
        return caller ? attr.singleThreaded() : attr;
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        qpA.close();
        qpB.close();
        cqA.close();
        cqB.close();
        mrA.close();
        mrB.close();
        memA.close();
        memB.close();
        pdA.close();
        pdB.close();
        a.close();
        b.close();
    }

    @Benchmark
    public long writeRoundTrip() {
        sq.start();
        sq.wrId(++wrId).flags(SendFlags.SIGNALED).rdmaWrite(mrB.rkey(), mrB.address()).sge(mrA, 0, size);
        sq.complete();
        long spins = 0;
        while (cqA.poll(wc) == 0) {
            if (caller) {
                a.progress();
                b.progress();
            } else {
                Thread.onSpinWait();
            }
            if (++spins > 100_000_000L) {
                throw new IllegalStateException("no completion");
            }
        }
        if (!wc.isSuccess()) {
            throw new IllegalStateException(wc.toString());
        }
        return wc.wrId();
    }
}
