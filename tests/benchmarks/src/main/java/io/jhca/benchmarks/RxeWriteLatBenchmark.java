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
 * One iteration of ib_write_lat's ping-pong through two rxe devices driven from this one thread (caller progress):
 * A writes {@code size} bytes into B's buffer, B sees the last byte change and writes back, A sees it; each side
 * reaps its WRITE's completion, which the peer's ACK brings with the answer (the held ACK). With
 * {@code link=memory} the devices' links pass datagrams to each other in memory, so the score is the Java work of
 * a round trip alone: the two requests and two ACKs built, sealed, checked and executed, both posts and both
 * completions, which {@code hwlab perf write-lat} pays on top of the kernel's UDP path. {@code link=udp}: the same
 * over UDP sockets on loopback, the kernel's work included (one thread does both sides' system calls).
 * {@link #idleProgress} times one progress call that finds nothing.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class RxeWriteLatBenchmark {
    private static final String HOST_A = "127.0.0.63";
    private static final String HOST_B = "127.0.0.64";

    @Param({"2"})
    public int size;

    /** memory: the links hand datagrams over in memory; udp: UDP sockets on loopback. */
    @Param({"memory", "udp"})
    public String link;

    private Side a;
    private Side b;
    private long n;

    /** One side of the ping-pong: a device, its buffer (send half, receive half) and a QP to the other. */
    private static final class Side {
        final Context ctx;
        final ProtectionDomain pd;
        final DmaRegion mem;
        final UnsafeBuffer buf;
        final MemoryRegion mr;
        final CompletionQueue cq;
        final QueuePair qp;
        final WorkCompletion wc = new WorkCompletion();
        SendQueue sq;

        Side(RxeDeviceConfig config) {
            ctx = RxeProvider.open(config);
            pd = ctx.allocatePd();
            mem = DmaMemory.allocate(1 << 16);
            buf = mem.buffer();
            mr = pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE);
            cq = ctx.createCq(64, CqFlags.SINGLE_THREADED);
            qp = pd.createQp(QpInitAttributes.rc(cq, cq).maxSendWr(16).maxRecvWr(16).maxInlineData(64)
                    .singleThreaded());
        }

        void connect(Side peer) {
            qp.modify(QpAttributes.toInit(1, Access.REMOTE_WRITE));
            qp.modify(QpAttributes.toRtr(peer.qp.qpn(), 0, AhAttributes.to(peer.ctx.queryGid(1, 1)).sgidIndex(1),
                    Mtu.MTU_4096));
            qp.modify(QpAttributes.toRts(0));
            sq = qp.sendQueue();
        }

        /** Writes the first {@code size} bytes, the last carrying {@code count}, to the peer's receive half. */
        void post(Side peer, int size, byte count) {
            buf.putByte(size - 1, count);
            sq.start();
            sq.wrId(count).flags(SendFlags.SIGNALED).rdmaWrite(peer.mr.rkey(), peer.mr.address() + (1 << 15))
                    .inlineData(buf, 0, size);
            if (sq.complete() != 0) {
                throw new IllegalStateException("send queue full");
            }
        }

        void close() {
            qp.close();
            cq.close();
            mr.close();
            mem.close();
            pd.close();
            ctx.close();
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        RxeDeviceConfig.Builder ca = RxeDeviceConfig.builder("lat0").address(HOST_A).progressMode(ProgressMode.CALLER);
        RxeDeviceConfig.Builder cb = RxeDeviceConfig.builder("lat1").address(HOST_B).progressMode(ProgressMode.CALLER);
        if (link.equals("memory")) {
            MemoryLinkPair pair = new MemoryLinkPair(HOST_A, HOST_B);
            ca.link(pair.first());
            cb.link(pair.second());
        } else if (!link.equals("udp")) {
            throw new IllegalArgumentException("link: memory or udp, not " + link);
        }
        a = new Side(ca.build());
        b = new Side(cb.build());
        a.connect(b);
        b.connect(a);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        a.close();
        b.close();
    }

    @Benchmark
    public long pingPong() {
        byte count = (byte) ++n;
        a.post(b, size, count);
        awaitByte(b, count);
        b.post(a, size, count);
        awaitByte(a, count);
        // A's WRITE was ACKed with B's WRITE; B's own ACK comes with A's next WRITE, so B reaps the one before
        reap(a, count);
        if (n > 1) {
            reap(b, (byte) (count - 1));
        }
        return n;
    }

    /** Round trips per call of {@link #block}. */
    static final int BLOCK = 1000;

    /**
     * {@link #pingPong} {@value #BLOCK} times: what {@code scripts/bench-ab} alternates between two builds in one
     * JVM, where a change of a few percent shows through this machine's drift.
     */
    @Benchmark
    @BenchmarkMode(Mode.SampleTime)
    @OperationsPerInvocation(BLOCK)
    public long block() {
        long sum = 0;
        for (int i = 0; i < BLOCK; i++) {
            sum += pingPong();
        }
        return sum;
    }

    /**
     * One progress call of a device with nothing to do: what each spin of a polling loop costs between messages
     * (with {@code link=udp} an empty receive system call included).
     */
    @Benchmark
    public int idleProgress() {
        return a.ctx.progress();
    }

    /** Drives both devices until the last byte of {@code side}'s receive half is {@code count}. */
    private void awaitByte(Side side, byte count) {
        int at = (1 << 15) + size - 1;
        long spins = 0;
        while (side.buf.getByteVolatile(at) != count) {
            a.ctx.progress();
            b.ctx.progress();
            if (++spins > 100_000_000L) {
                throw new IllegalStateException("the peer's WRITE " + count + " did not arrive");
            }
        }
    }

    private void reap(Side side, byte wrId) {
        long spins = 0;
        while (side.cq.poll(side.wc) == 0) {
            a.ctx.progress();
            b.ctx.progress();
            if (++spins > 100_000_000L) {
                throw new IllegalStateException("no completion for WRITE " + wrId);
            }
        }
        if (!side.wc.isSuccess() || (byte) side.wc.wrId() != wrId) {
            throw new IllegalStateException(side.wc.toString());
        }
    }
}
