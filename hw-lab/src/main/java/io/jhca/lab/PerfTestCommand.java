package io.jhca.lab;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.Callable;

/**
 * The options every perf test takes: perftest's short and long names (perftest_parameters.c usage) where
 * perftest has the option, and jhca's additions (in-process peer device, JSON, plot, UDP floor, stall timeout).
 */
@Command(mixinStandardHelpOptions = true, sortOptions = false)
public abstract class PerfTestCommand implements Callable<Integer> {
    /** perftest_parameters.h: MIN_ITER, MAX_QP_NUM, MAX_INLINE, MIN/MAX_CQ_MOD, DEF_MARGIN. */
    static final int MIN_ITER = 5;
    static final int MAX_QP_NUM = 16384;
    static final int MAX_INLINE = 912;
    static final int MAX_CQ_MOD = 1024;
    static final int DEF_MARGIN = 2;
    /**
     * Warm-up of an in-process latency run: enough round trips that HotSpot's tiered compiler has reached C2 for
     * the loops and the transport (Tier4InvocationThreshold 5000, Tier4CompileThreshold 15000, plus the time the
     * compile takes) before anything is measured.
     */
    static final int IN_PROCESS_WARMUP = 20000;
    /**
     * Warm-up messages per QP of an in-process bandwidth run. The footer's "JIT compiling during measurement" is
     * the measure: after 5000 (in one run of the loop, or in four) the compiler still worked 0.7-1.1 s inside the
     * measured window on two cores, taking its time from the client and server threads; after 20000 in four runs
     * ({@code BandwidthLoops.client}) it compiled nothing there in most runs. At 64 KiB the extra warm-up costs
     * about two seconds.
     */
    static final int IN_PROCESS_BW_WARMUP = 20000;

    private final PerfTest test;

    @Spec
    CommandSpec spec;

    @Option(names = {"-d", "--ib-dev"}, paramLabel = "DEV",
            description = "use IB device DEV (default: first device; in-process: rxe0 for the server)")
    String device;

    @Option(names = "--peer-dev", paramLabel = "DEV",
            description = "in-process run only: the client's device (default: rxe1, or the next device)")
    String peerDevice;

    @Option(names = {"-i", "--ib-port"}, paramLabel = "PORT", description = "use port PORT of the device (default 1)")
    int ibPort = 1;

    @Option(names = {"-s", "--size"}, paramLabel = "SIZE", description = "size of message to exchange (default: 2 lat, 65536 bw, 8 atomic)")
    Integer size;

    @Option(names = {"-a", "--all"}, description = "run sizes from 2 till 2^23")
    boolean all;

    @Option(names = {"-n", "--iters"}, paramLabel = "ITERS", description = "number of exchanges (at least 5; default 1000, 5000 write-bw)")
    Integer iters;

    @Option(names = {"-D", "--duration"}, paramLabel = "SECONDS", description = "run for SECONDS instead of -n iterations")
    int duration;

    @Option(names = {"-f", "--margin"}, paramLabel = "SECONDS",
            description = "with -D: seconds left out at start and end (default ${DEFAULT-VALUE})")
    int margin = DEF_MARGIN;

    @Option(names = {"-m", "--mtu"}, paramLabel = "MTU", description = "MTU size: 256 - 4096 (default: port MTU)")
    int mtu;

    @Option(names = {"-x", "--gid-index"}, paramLabel = "INDEX", description = "GID index (default: first IPv4-mapped GID, 1 on rxe)")
    Integer gidIndex;

    @Option(names = {"-p", "--port"}, paramLabel = "PORT", description = "listen on/connect to TCP port PORT (default 18515; in-process: any free port)")
    Integer port;

    @Option(names = {"-q", "--qp"}, paramLabel = "NUM", description = "number of QPs (bandwidth tests; default 1)")
    int numQps = 1;

    @Option(names = {"-I", "--inline_size"}, paramLabel = "SIZE", description = "max size of message to be sent inline (default: 220 write-lat, 236 send-lat, else 0)")
    Integer inlineSize;

    @Option(names = {"-t", "--tx-depth"}, paramLabel = "DEPTH", description = "size of the send queue (default 128 bw, 1 lat)")
    Integer txDepth;

    @Option(names = {"-r", "--rx-depth"}, paramLabel = "DEPTH", description = "receives posted ahead (SEND tests; default 512)")
    Integer rxDepth;

    @Option(names = {"-Q", "--cq-mod"}, paramLabel = "N", description = "generate a completion every N sends (bw; default 100)")
    Integer cqMod;

    @Option(names = "--report_gbits", description = "report BW in Gbit/sec instead of MiB/sec")
    boolean reportGbits;

    @Option(names = {"-u", "--qp-timeout"}, paramLabel = "TIMEOUT", description = "QP timeout: 4.096 usec * 2^TIMEOUT (default ${DEFAULT-VALUE})")
    int qpTimeout = 14;

    @Option(names = {"-S", "--sl"}, paramLabel = "SL", description = "service level (default ${DEFAULT-VALUE})")
    int sl = 0;

    @Option(names = "--server", description = "be the server of a two-process run and wait for a client")
    boolean server;

    @Option(names = "--bind", paramLabel = "ADDR", description = "server: listen on ADDR only (default: all addresses, as ibv_rc_pingpong and perftest)")
    String bind;

    @Option(names = "--json", paramLabel = "FILE", description = "write the results, with the latency histogram, as JSON")
    Path json;

    @Option(names = "--plot", paramLabel = "FILE", description = "draw a latency CDF or a BW-vs-size chart (.png or .svg)")
    Path plot;

    @Option(names = "--udp-baseline", negatable = true,
            description = "also measure the same ping-pong (bandwidth tests: the same stream) over plain UDP between the"
                    + " same addresses (default: on in-process, and on the client of two hwlab processes, whose server"
                    + " answers the floor's datagrams; off against C perftest)")
    Boolean udpBaseline;

    @Option(names = "--warmup", paramLabel = "ITERS",
            description = "unmeasured iterations before the -n measured ones (latency tests: before every size;"
                    + " bandwidth tests: per QP, before the first size), so the JIT has compiled the loops (default: "
                    + IN_PROCESS_WARMUP + " for latency tests, " + IN_PROCESS_BW_WARMUP + " for bandwidth tests, in-process"
                    + " and between two hwlab processes, which agree on it in perftest's version exchange; none with C"
                    + " perftest, which runs exactly -n, where an rxe device warms up in private instead unless --warmup"
                    + " is given; given on one side of two hwlab processes, it holds for both)")
    Integer warmup;

    @Option(names = "--stall-timeout", paramLabel = "SECONDS",
            description = "fail when a wait sees no progress for this long; 0 = forever (default ${DEFAULT-VALUE})")
    int stallSeconds = 30;

    @Option(names = {"--use-srq", "--use_srq"},
            description = "SEND tests: receive through a shared receive queue of rx-depth WRs (perftest --use-srq)")
    boolean useSrq;
    @Option(names = {"-e", "--events"},
            description = "sleep on CQ events (completion channels) instead of polling; not with WRITE tests or -D, as perftest")
    boolean events;

    @Option(names = {"-R", "--rdma_cm"},
            description = "connect the QPs with rdma_cm on the -p port and exchange over them (perftest -R); no TCP")
    boolean rdmaCm;

    @Option(names = {"-g", "--mcg"},
            description = "send-bw: SENDs to a multicast group with the server's QP attached to it (perftest --mcg; UD)")
    boolean mcg;

    @Option(names = {"-M", "--MGID"}, paramLabel = "MGID",
            description = "with --mcg: the group, as perftest takes it (16 ':'-separated bytes, e.g."
                    + " 0:0:0:0:0:0:0:0:0:0:255:255:239:1:1:1) or an IP address (ff0e::1, 239.1.1.1); default ff01:0:2:c985::")
    String mgid;

    @Option(names = {"-c", "--connection"}, paramLabel = "TYPE",
            description = "connection type: RC (default), or UD, which only --mcg runs (and implies)")
    String connection;

    @Option(names = "--latency_gap", paramLabel = "USEC",
            description = "latency tests: wait USEC microseconds before each post, as perftest's --latency_gap (its"
                    + " times then include the gap; the UDP floors wait the same)")
    int latencyGap;

    @Option(names = "--repeat", paramLabel = "N",
            description = "in-process runs: run the test N times in this JVM and end with jhca's ratio to the UDP floor"
                    + " of each run and their median (not a perftest option; default ${DEFAULT-VALUE})")
    int repeat = 1;

    @Parameters(arity = "0..1", paramLabel = "SERVER", description = "server to connect to (client role)")
    String serverHost;

    protected PerfTestCommand(PerfTest test) {
        this.test = test;
    }

    @Override
    public Integer call() throws Exception {
        PerfParams p = params();
        java.io.PrintWriter out = spec.commandLine().getOut();
        if (repeat == 1) {
            PerfMain.run(p, out);
            return 0;
        }
        java.util.List<PerfOutcome> runs = new java.util.ArrayList<>();
        for (int i = 1; i <= repeat; i++) {
            out.printf(" run %d of %d%n", i, repeat);
            runs.add(PerfMain.run(p, out));
        }
        PerfRepeat.summary(runs, out);
        return 0;
    }

    /** Checks the options (usage errors name the option) and applies perftest's per-test defaults. */
    PerfParams params() {
        check(!(server && serverHost != null), "--server and a SERVER argument exclude each other");
        PerfParams.Role role = server ? PerfParams.Role.SERVER : serverHost != null ? PerfParams.Role.CLIENT : PerfParams.Role.BOTH;
        check(peerDevice == null || role == PerfParams.Role.BOTH, "--peer-dev is for in-process runs (no --server, no SERVER)");
        check(ibPort >= 1, "-i/--ib-port must be >= 1");
        int sz = size != null ? size : test.defaultSize();
        if (test.verb() == PerfTest.Verb.ATOMIC) {
            check(sz == 8, "Message size cannot be changed for Atomic tests (8 bytes)");
            check(!all, "-a/--all is not supported for Atomic tests");
        }
        check(sz >= 1 && sz <= PerfTest.MAX_SIZE, "-s/--size must be 1.." + PerfTest.MAX_SIZE);
        int it = iters != null ? iters : test.defaultIters();
        check(it >= MIN_ITER, "-n/--iters must be at least " + MIN_ITER);
        check(duration >= 0, "-D/--duration must be >= 0");
        check(margin >= 0, "-f/--margin must be >= 0");
        check(duration == 0 || duration > 2 * margin, "-D/--duration must be longer than twice the margin (-f, default "
                + DEF_MARGIN + " s)");
        check(duration == 0 || !all, "-D/--duration and -a/--all exclude each other");
        check(mtu == 0 || mtu == 256 || mtu == 512 || mtu == 1024 || mtu == 2048 || mtu == 4096,
                "-m/--mtu must be 256, 512, 1024, 2048 or 4096");
        check(gidIndex == null || gidIndex >= 0, "-x/--gid-index must be >= 0");
        check(port == null || (port >= 0 && port <= 65535), "-p/--port must be 0..65535");
        check(numQps >= 1 && numQps <= MAX_QP_NUM, "-q/--qp must be 1.." + MAX_QP_NUM);
        check(numQps == 1 || !test.latency(), "-q/--qp: latency tests run on one QP");
        check(inlineSize == null || (inlineSize >= 0 && inlineSize <= MAX_INLINE), "-I/--inline_size must be 0.." + MAX_INLINE);
        check(txDepth == null || txDepth >= 1, "-t/--tx-depth must be >= 1");
        check(rxDepth == null || rxDepth >= 1, "-r/--rx-depth must be >= 1");
        check(cqMod == null || (cqMod >= 1 && cqMod <= MAX_CQ_MOD), "-Q/--cq-mod must be 1.." + MAX_CQ_MOD);
        check(qpTimeout >= 0 && qpTimeout <= 31, "-u/--qp-timeout must be 0..31");
        check(sl >= 0 && sl <= 15, "-S/--sl must be 0..15");
        check(stallSeconds >= 0, "--stall-timeout must be >= 0");
        check(!useSrq || test.verb() == PerfTest.Verb.SEND, "--use-srq is for SEND tests only");
        // perftest_parameters.c refuses both: a WRITE's target sees no completion to sleep on, and -D stops by alarm
        check(!events || test.verb() != PerfTest.Verb.WRITE, "-e/--events: Events feature not available on WRITE verb");
        check(!events || duration == 0, "-e/--events: Duration mode doesn't work with events");
        check(warmup == null || warmup >= 0, "--warmup must be >= 0");
        check(latencyGap >= 0, "--latency_gap must be >= 0");
        // perftest_parameters.c: "Latency gap feature is only for latency tests"
        check(latencyGap == 0 || test.latency(), "--latency_gap: Latency gap feature is only for latency tests");
        check(repeat >= 1, "--repeat must be >= 1");
        check(repeat == 1 || role == PerfParams.Role.BOTH, "--repeat is for in-process runs (no --server, no SERVER)");
        check(repeat == 1 || (json == null && plot == null),
                "--repeat: --json and --plot describe one run; give them without --repeat");
        check(connection == null || connection.equals("RC") || connection.equals("UD"),
                "-c/--connection: RC or UD (UD only with --mcg)");
        check(!"UD".equals(connection) || mcg, "-c/--connection UD: hwlab runs UD only in multicast mode (--mcg)");
        check(mgid == null || mcg, "-M/--MGID needs --mcg");
        if (mcg) {
            // perftest_parameters.c: --mcg is for SEND tests, implies UD, and refuses -R and more than one QP
            check(test == PerfTest.SEND_BW, "--mcg: hwlab runs the multicast mode in send-bw (perftest has it in"
                    + " ib_send_bw and ib_send_lat)");
            check(!"RC".equals(connection), "--mcg runs on UD: -c RC contradicts it");
            check(!rdmaCm, "--mcg: Perftest still doesn't support Multicast with rdma_cm (-R)");
            check(numQps == 1, "--mcg: Only 1 QP supported in multicast (-q)");
            if (mgid != null) {
                try {
                    PerfMcast.parse(mgid);
                } catch (RuntimeException e) {
                    check(false, e.getMessage());
                }
            }
        }
        if (plot != null) {
            String n = plot.getFileName().toString().toLowerCase(Locale.ROOT);
            check(n.endsWith(".png") || n.endsWith(".svg"), "--plot FILE must end in .png or .svg");
        }
        int cq = cqMod != null ? cqMod : 100;
        if (cqMod == null && !all && sz > 8192 && !events) {
            cq = 1; // perftest: CQ moderation off above MSG_SIZE_CQ_MOD_LIMIT (8192) unless asked for, or with -e
        }
        int tcp = port != null ? port : role == PerfParams.Role.BOTH ? 0 : 18515;
        boolean udp = udpBaseline != null ? udpBaseline : role == PerfParams.Role.BOTH;
        return new PerfParams(test, role, device, peerDevice, ibPort, sz, all, it, duration, margin, mtu, gidIndex, tcp,
                numQps, inlineSize != null ? inlineSize : -1, txDepth != null ? txDepth : -1, rxDepth != null ? rxDepth : -1,
                cq, reportGbits, qpTimeout, sl, serverHost, bind, json, plot, udp, stallSeconds * 1000L, useSrq,
                events,
                warmup != null ? warmup : role != PerfParams.Role.BOTH ? 0 : PerfParams.defaultWarmup(test),
                rdmaCm, mcg, mgid, latencyGap, warmup != null, udpBaseline != null);
    }

    private void check(boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }
}
