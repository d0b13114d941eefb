package io.jhca.benchmarks;

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
 * The C implementation's memory mode ({@code src/main/c/roce_write_lat.c}, {@code run_memory}) line for line in
 * Java: RoCE RC's work for ib_write_lat's ping-pong in the language against C, apart from jhca's structure, which
 * {@link RxeWriteLatBenchmark} {@code -p link=memory} adds. One operation: one round trip of the C loop's body, both
 * {@link BareRoce} sides in this thread, datagrams handed from side to side in memory ({@link MemoryHandOver}). The
 * client posts and sends its WRITE; the server takes it (and the ACK of its own last WRITE), sees the last byte
 * change, takes its previous WRITE's completion and posts its own WRITE, sent with the held ACK as a GSO pair; the
 * client takes both, polls its CQ, then the byte. {@link RoceBareWireLat} runs the same sides over UDP sockets.
 *
 * <p>About 390 ns a round trip here against the C's 220; the CRC ({@link BareIcrc}) takes about 20 ns an ICRC in
 * both, so the rest of the work is where Java is slower. No sockets are opened (the C's memory mode opens but does
 * not use them), so the ports are fixed, 40000 and 4791, where the C's are ephemeral. The trial's end checks, as the
 * C's does, that no packet was refused and the PSNs and WQEs agree.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--add-opens", "java.base/jdk.internal.misc=ALL-UNNAMED",
        "--add-opens", "java.base/sun.nio.ch=ALL-UNNAMED"})
public class RoceBareLoopBenchmark {
    private static final int CLIENT_IP = 0x7f000002;
    private static final int SERVER_IP = 0x7f000001;
    private static final int CLIENT_PORT = 40000;
    private static final int SERVER_PORT = 4791;

    @Param({"2"})
    public int size;

    private BareRoce cli;
    private BareRoce srv;
    private long it;

    @Setup(Level.Trial)
    public void setUp() {
        BareIcrc.selfCheck();
        MemoryHandOver cliEnd = new MemoryHandOver();
        MemoryHandOver srvEnd = new MemoryHandOver();
        MemoryHandOver.pair(cliEnd, srvEnd);
        cli = new BareRoce(CLIENT_IP, CLIENT_PORT, 0x12, 0x11, 0x2201, size, cliEnd);
        srv = new BareRoce(SERVER_IP, SERVER_PORT, 0x11, 0x12, 0x1101, size, srvEnd);
        BareRoce.connect(cli, srv);
        it = 0;
    }

    /** The rest of run_memory after its loop: the client's last ACK to the server, then check_and_close's checks. */
    @TearDown(Level.Trial)
    public void tearDown() {
        if (it > 0) {
            cli.flushAck();
            srv.handOver.receive(srv);
            srv.awaitCompletion(it - 1);
        }
        BareRoce.check(cli, srv);
    }

    /** One round trip: run_memory's loop body. */
    @Benchmark
    public long roundTrip() {
        long i = it;
        cli.writeNext(i);
        srv.awaitData(i);   // the WRITE, and the ACK of the server's last one
        if (i > 0) {
            srv.awaitCompletion(i - 1);
        }
        srv.writeNext(i);
        cli.awaitCompletion(i);
        cli.awaitData(i);
        it = i + 1;
        return i;
    }
}
