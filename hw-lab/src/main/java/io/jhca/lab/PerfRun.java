package io.jhca.lab;

import io.jhca.verbs.Gid;
import io.jhca.verbs.LinkLayer;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.VerbsException;

import java.io.IOException;
import java.io.PrintWriter;
import java.net.InetAddress;

/**
 * One side of a perf run from the first TCP byte to the last, in the order perftest 6.06's main() of each test
 * runs it (src/write_lat.c, send_lat.c, read_lat.c, atomic_lat.c, write_bw.c, send_bw.c, read_bw.c with RC; with
 * -R the exchange runs over rdma_cm's exchange QP and rdma_cm connects the test QPs, {@link PerfCm}): version, system data and MTU exchange, resources, banner, key handshakes, connect, address
 * lines, the per-test sync handshakes, the measured loops, the reports and the closing exchange. Following the
 * same handshake count per test is what lets either side be the C perftest.
 */
final class PerfRun {
    /** What jhca offers for check_sys_data: sysconf(_SC_PAGESIZE) and a 64-byte cache line. */
    static final int CYCLE_BUFFER = 4096;
    static final int CACHE_LINE = 64;
    /** perftest_parameters.c: no peak BW above 20000 iterations. */
    static final long PEAK_MAX_ITERS = 20000;

    /** The run's parameters; the warm-up in them is the one agreed in the version exchange. */
    private PerfParams p;
    private final PerfSide s;
    private final PerftestComm comm;
    private final PrintWriter out;
    private final boolean server;
    private final PerfOutcome outcome;
    /** The private warm-up before a run against C perftest, or null. */
    private PrivateWarmup.Result privateWarmup;
    /** Whether {@link #privateWarmup} ran before the exchange connection ({@link PerfCmMain}), whoever the peer is. */
    private final boolean warmedBeforeConnecting;
    /** Both sides serve the UDP floors' ends after the test ({@link RemoteFloors}). */
    private boolean floorsBetween;
    /** The client's floors with the server's end in its process, where the client cannot bind the server's address. */
    private RemoteFloors remoteFloors;

    private PerfRun(PerfParams p, PerfSide s, PerftestWire link, boolean client, PrintWriter out,
            PrivateWarmup.Result warmedUp) {
        this.p = p;
        this.privateWarmup = warmedUp;
        this.warmedBeforeConnecting = warmedUp != null;
        this.s = s;
        this.comm = new PerftestComm(link, client, p.rdmaCm());
        this.out = out;
        this.server = !client;
        this.outcome = new PerfOutcome(p);
    }

    static PerfOutcome run(PerfParams p, PerfSide s, PerftestWire link, boolean client, PrintWriter out) throws IOException {
        return run(p, s, link, client, out, null);
    }

    /**
     * As above, after a private warm-up run before the exchange connection ({@code warmedUp}, null if none): a complete
     * one stands for the default warm-up an hwlab peer would agree on (this side offers 0 in its place), and none
     * runs after the versions.
     */
    static PerfOutcome run(PerfParams p, PerfSide s, PerftestWire link, boolean client, PrintWriter out,
            PrivateWarmup.Result warmedUp) throws IOException {
        PerfRun r = new PerfRun(p, s, link, client, out, warmedUp);
        try {
            return r.go();
        } finally {
            out.flush();
        }
    }

    private PerfOutcome go() throws IOException {
        PerfTest t = p.test();
        PeerOffer offer = p.offer();
        if (warmedBeforeConnecting && privateWarmup.runs() == PrivateWarmup.RUNS && !offer.given()) {
            offer = new PeerOffer(0, false, offer.floors()); // warm already: the peer's default, if larger, still wins
        }
        outcome.remoteVersion = comm.exchangeVersions(offer);
        PeerOffer theirs = comm.peerOffer();
        p = p.withWarmup(PeerOffer.agree(offer, theirs, p.warmup()));
        outcome.warmupIters = p.warmupIters();
        outcome.peerIsHwlab = theirs != null;
        floorsBetween = offer.floors() && theirs != null && theirs.floors();
        if (floorsBetween) {
            comm.keepOpenAfterDone();
        }
        if (!warmedBeforeConnecting && !outcome.peerIsHwlab) {
            io.jhca.rxe.RxeContext twinned = PrivateWarmup.twinnable(p, s.ctx);
            if (twinned != null) {
                // C perftest runs exactly -n: warm up in private while it waits for the next exchange step
                privateWarmup = PrivateWarmup.run(p, twinned);
            }
        }
        if (privateWarmup != null) {
            outcome.privateWarmupIters = privateWarmup.iters();
        }
        int[] sys = comm.checkSysData(CYCLE_BUFFER, CACHE_LINE);
        Mtu mtu = comm.checkMtu(s.localMtu());
        if (p.rdmaCm()) {
            // create_rdma_cm_connection: a sync handshake of zeroed keys, the connections, another sync
            s.createResources(sys[0], sys[1], mtu);
            PerftestDest zero = new PerftestDest(0, 0, 0, 0, 0, 0, null, 0);
            if (server) {
                s.cm.listen();
            }
            comm.handshake(zero);
            s.cm.connect(server, p.stallMillis());
            comm.handshake(zero);
            s.describeQps();
        } else {
            s.create(sys[0], sys[1], mtu);
        }
        describe();
        PerfReport.banner(out, s, server, warmupLine());

        int n = s.qps.length;
        s.remote = new PerftestDest[n];
        if (t == PerfTest.WRITE_LAT || t == PerfTest.READ_LAT || t == PerfTest.ATOMIC_LAT) {
            s.remote[0] = comm.handshake(s.mine[0]); // the extra first handshake of write_lat/read_lat/atomic_lat
        }
        for (int i = 0; i < n; i++) {
            s.remote[i] = comm.handshake(s.mine[i]);
        }
        if (!p.rdmaCm()) {
            checkGidCompatibility(s.mine[0].gid(), s.remote[0].gid());
        }
        s.connect();
        if (privateWarmup != null && privateWarmup.runs() > 0) {
            // what the banner and the connection queued for the compiler (class spinning for their call sites, the
            // exchange's code), compiled while the peer waits for the next sync rather than inside the measured window:
            // against the interop guest 0-325 ms of compiling in it (median 1) instead of 0-350 (median 33)
            JvmReport.waitForJitIdle(100);
        }
        boolean send = t.verb() == PerfTest.Verb.SEND;
        if (send) {
            comm.handshake(s.mine[0]);
        }
        // with --mcg the server's own GID line and the client's remote one show the group (gidArray "MGID")
        for (int i = 0; i < n; i++) {
            PerfReport.address(out, "local", t.verb(), s.mine[i], p.mcg() && server);
        }
        for (int i = 0; i < n; i++) {
            PerfReport.address(out, "remote", t.verb(), comm.handshake(s.mine[i]), p.mcg() && !server);
        }
        if (!send) {
            comm.handshake(s.mine[0]); // "An additional handshake is required after moving qp to RTR."
        }
        out.flush();
        switch (t) {
            case WRITE_LAT: writeLat(); break;
            case READ_LAT:
            case ATOMIC_LAT: oneSidedLat(); break;
            case SEND_LAT: sendLat(); break;
            case WRITE_BW:
            case READ_BW: rdmaBw(); break;
            case SEND_BW: sendBw(); break;
            default: throw new AssertionError(t);
        }
        return outcome;
    }

    /** The banner's warm-up line after "Warm-up : ", or null for a run without one. */
    private String warmupLine() {
        boolean inPrivate = privateWarmup != null && (privateWarmup.runs() > 0 || privateWarmup.stopped() != null);
        String privately = inPrivate ? privateWarmup.iters() + " iterations in " + privateWarmup.runs()
                + " runs between rxe devices of this process" : null;
        String stopped = inPrivate && privateWarmup.stopped() != null ? "; stopped early: " + privateWarmup.stopped() : "";
        if (p.warmupIters() > 0) {
            return p.warmupIters() + " iterations before the " + p.iters() + " measured (not in the results)"
                    + (inPrivate ? "; before connecting, " + privately + stopped : "");
        }
        if (inPrivate) {
            return privately + ", before the " + p.iters() + " measured ("
                    + (warmedBeforeConnecting ? "before connecting, as the rdma_cm exchange keeps a C peer's CPU busy"
                    : "the peer is not hwlab") + ")" + stopped;
        }
        return null;
    }

    private void describe() {
        outcome.device = s.ctx.name();
        outcome.role = server ? "server" : "client";
        outcome.gidIndex = s.gidIndex;
        outcome.mtu = s.mtu.bytes();
        outcome.txDepth = s.txDepth;
        outcome.rxDepth = s.rxDepth;
        outcome.cqMod = s.cqMod;
        outcome.inlineSize = s.inlineSize;
        outcome.outReads = s.outReads;
        outcome.transport = DevinfoCommand.transportValue(s.ctx.device().transport()) == 1 ? "IW" : "IB";
        outcome.linkLayer = s.port.linkLayer() == LinkLayer.ETHERNET ? "Ethernet" : "IB";
    }

    /** ctx_check_gid_compatibility: both GIDs IPv4-mapped, or neither. */
    static void checkGidCompatibility(Gid mine, Gid theirs) {
        if (mine == null || theirs == null) {
            return;
        }
        if (mine.isIpv4Mapped() != theirs.isIpv4Mapped()) {
            throw new VerbsException(VerbsException.EINVAL, "Found Incompatibility issue with GID types (local "
                    + Inet6Text.format(mine.bytes()) + ", remote " + Inet6Text.format(theirs.bytes())
                    + "). Please Try to use a different IP version.");
        }
    }

    private void tableHeader() {
        out.println(PerfReport.LINE);
        out.println(PerfReport.header(p));
        out.flush();
    }

    private DurationClock clock() {
        return p.durationMode() ? new DurationClock(p.duration(), p.margin()) : null;
    }

    private LatencySamples samples(int size) {
        return p.durationMode() ? LatencySamples.duration(size) : LatencySamples.iterations(size, p.iters());
    }

    private LatencyStats stats(LatencySamples smp) {
        int f = p.test().rttFactor();
        return smp.durationMode() ? LatencyStats.ofDuration(smp, f) : LatencyStats.of(smp.size, smp.deltas(), f);
    }

    private void latencyRow(LatencyStats st) {
        outcome.latency.add(st);
        out.println(st.row());
        out.flush();
    }

    private void writeLat() throws IOException {
        tableHeader();
        JvmReport jvm = null;
        for (int size : p.sizes()) {
            LatencySamples smp = samples(size);
            DurationClock clock = clock();
            jvm = jvm == null ? jvmReport() : jvm.begin();
            LatencyLoops.writeLat(s, size, server, smp, clock, p.warmupIters(), jvm);
            jvm.stop();
            latencyRow(stats(smp));
        }
        outcome.jvm = jvm;
        out.println(PerfReport.LINE);
        finish();
    }

    private void oneSidedLat() throws IOException {
        if (server) {
            // read_lat.c / atomic_lat.c: only the client posts; the server closes at once and waits there
            outcome.jvm = jvmReport();
            comm.closeConnection(s.mine[0]);
            outcome.jvm.stop();
            out.println(PerfReport.LINE);
            finish();
            return;
        }
        tableHeader();
        JvmReport jvm = null;
        for (int size : p.sizes()) {
            LatencySamples smp = samples(size);
            DurationClock clock = clock();
            jvm = jvm == null ? jvmReport() : jvm.begin();
            LatencyLoops.oneSidedLat(s, size, smp, clock, p.warmupIters(), jvm);
            jvm.stop();
            latencyRow(stats(smp));
        }
        outcome.jvm = jvm;
        out.println(PerfReport.LINE);
        comm.closeConnection(s.mine[0]);
        finish();
    }

    private void sendLat() throws IOException {
        tableHeader();
        JvmReport jvm = null;
        for (int size : p.sizes()) {
            RecvWr rwr = new RecvWr(1).wrId(0).sge(s.mr, s.recvSlot(0), size);
            postRecvs(0, rwr, s.recvPerQp());
            // sync so the client does not send before the server's receives are posted
            comm.handshake(s.mine[0]);
            LatencySamples smp = samples(size);
            DurationClock clock = clock();
            jvm = jvm == null ? jvmReport() : jvm.begin();
            LatencyLoops.sendLat(s, size, server, smp, clock, rwr, p.warmupIters(), jvm);
            jvm.stop();
            latencyRow(stats(smp));
        }
        outcome.jvm = jvm;
        out.println(PerfReport.LINE);
        comm.closeConnection(s.mine[0]);
        finish();
    }

    private void rdmaBw() throws IOException {
        tableHeader();
        if (server) {
            // write_bw.c / read_bw.c: the server waits for the client's report and prints it
            outcome.jvm = jvmReport();
            comm.handshake(s.mine[0]);
            PerftestComm.BwReport rem = comm.exchangeBwReports(new PerftestComm.BwReport(0, 0, 0, 0, 0));
            outcome.jvm.stop();
            bwRow(BandwidthStats.of(rem, p.reportGbits()));
            comm.closeConnection(s.mine[0]);
            out.println(PerfReport.LINE);
            finish();
            return;
        }
        JvmReport jvm = null;
        BandwidthStats last = null;
        for (int size : p.sizes()) {
            BandwidthSamples smp = bwSamples(size);
            DurationClock clock = clock();
            jvm = jvm == null ? jvmReport() : jvm.begin();
            BandwidthLoops.client(s, size, smp, clock, warmup(size), jvm);
            jvm.stop();
            last = BandwidthStats.of(smp, p.reportGbits());
            bwRow(last);
        }
        outcome.jvm = jvm;
        out.println(PerfReport.LINE);
        comm.handshake(s.mine[0]);
        comm.exchangeBwReports(last.report());
        comm.closeConnection(s.mine[0]);
        finish();
    }

    private void sendBw() throws IOException {
        tableHeader();
        JvmReport jvm = null;
        for (int size : s.sizes()) {
            RecvWr[] rwrs = new RecvWr[s.qps.length];
            if (server) {
                for (int i = 0; i < rwrs.length; i++) {
                    rwrs[i] = new RecvWr(1).wrId(i).sge(s.mr, s.recvSlot(i), s.recvLength(size));
                    postRecvs(i, rwrs[i], s.recvPerQp());
                }
            }
            comm.handshake(s.mine[0]);
            BandwidthSamples smp = bwSamples(size);
            DurationClock clock = clock();
            jvm = jvm == null ? jvmReport() : jvm.begin();
            if (server) {
                BandwidthLoops.sendServer(s, size, smp, rwrs, clock, warmup(size), jvm);
            } else {
                BandwidthLoops.client(s, size, smp, clock, warmup(size), jvm);
            }
            jvm.stop();
            bwRow(BandwidthStats.of(smp, p.reportGbits()));
            if (p.all()) {
                comm.handshake(s.mine[0]); // send_bw.c RUN_ALL: one more sync after every size
            }
        }
        outcome.jvm = jvm;
        out.println(PerfReport.LINE);
        comm.closeConnection(s.mine[0]);
        finish();
    }

    /**
     * Bandwidth tests warm up before their first size only: the code is the same for every size, and warming
     * every size of -a would move gigabytes. Latency tests warm up at every size (their loops are per size).
     */
    private long warmup(int size) {
        return size == s.sizes().get(0) ? p.warmupIters() : 0;
    }

    /**
     * The warm-up of a UDP floor at {@code size}: the run's ({@link #warmup}; latency floors warm up at every size, as
     * the latency tests do), and with -D, whose RDMA run leaves its first seconds out instead, the count an -n run would
     * warm up with: a floor of 1000 round trips (or one stream) from a cold start measured the JIT, not the kernel
     * (in-process send-lat -D 3: plain floor t_typical 2.94 us against 1.7 warm, t_avg 4.11 against 1.9).
     */
    private long floorWarmup(int size) {
        if (!p.durationMode()) {
            return p.test().latency() ? p.warmupIters() : warmup(size);
        }
        return p.test().latency() || size == s.sizes().get(0) ? PerfParams.defaultWarmup(p.test()) : 0;
    }

    private BandwidthSamples bwSamples(int size) {
        long tot = p.durationMode() ? 0 : (long) p.iters() * s.qps.length;
        boolean peak = !p.durationMode() && !server && tot <= PEAK_MAX_ITERS;
        int points = (int) Math.min(Integer.MAX_VALUE, tot / Math.max(1, s.cqMod) + s.qps.length + 2);
        return new BandwidthSamples(size, tot, peak, points);
    }

    private void bwRow(BandwidthStats st) {
        outcome.bandwidth.add(st);
        out.println(st.row());
        out.flush();
    }

    private void postRecvs(int qp, RecvWr rwr, int count) {
        for (int i = 0; i < count; i++) {
            if (s.postRecv(s.qps[qp], rwr) != 1) {
                throw new IllegalStateException("Couldn't post receive " + (i + 1) + " of " + count + " (receive queue full)");
            }
        }
    }

    /** A JVM report whose windows also count what this side's device resent ({@link LossCounters}). */
    private JvmReport jvmReport() {
        return JvmReport.start(new LossCounters(s.ctx));
    }

    /** The lines jhca adds after perftest's table: the UDP floor and the JVM/GC footer. */
    private void finish() {
        PerftestWire wire = null;
        if (floorsBetween) {
            try {
                wire = comm.afterDone();
            } catch (IOException e) {
                // the test's results are in: a connection lost now costs the floors' other end, not the run
                out.println(" UDP floors: the connection to the peer ended: " + e.getMessage());
                floorsBetween = false;
            }
        }
        // a UDP socket has no counterpart of a UD QP's group
        boolean floors = !server && p.udpBaselineWith(floorsBetween) && !p.mcg();
        if (floors && floorsBetween && !bindsHere(s.remote[0].gid().toInetAddress())) {
            remoteFloors = new RemoteFloors(wire, s.gid.toInetAddress(), s.remote[0].gid().toInetAddress());
            outcome.floorsAtServer = true;
        }
        if (floors) {
            udpFloor();
        }
        try {
            if (floorsBetween && server) {
                int served = RemoteFloors.serve(wire, s.gid.toInetAddress(), s.remote[0].gid().toInetAddress(),
                        Spin.stallNanos(p.stallMillis()));
                if (served > 0) {
                    out.printf(" UDP floors: answered %d of the client's measurements here (the client prints them)%n",
                            served);
                }
            } else if (floorsBetween) {
                RemoteFloors.end(wire);
            }
        } catch (IOException e) {
            out.println(" UDP floors: the connection to the peer ended: " + e.getMessage());
        }
        if (outcome.jvm == null) {
            outcome.jvm = JvmReport.start().stop();
        }
        out.println(outcome.jvm.footer());
        out.println(MachineReport.get().line());
        // -D leaves its first and last seconds out of the samples instead (the margin)
        String cold = p.durationMode() ? null : coldJitHint(p.warmupIters() + outcome.privateWarmupIters,
                outcome.jvm.jitMillis(), outcome.peerIsHwlab);
        if (cold != null) {
            out.println(cold);
        }
        String losses = outcome.jvm.losses() == null ? null : outcome.jvm.losses().line(outcome.device);
        if (losses != null) {
            out.println(losses);
        }
        if (s.ctx instanceof io.jhca.rxe.RxeContext rxe) {
            // where the device's packets come from changes what its latency is made of: say it with the numbers
            out.println(" Device " + outcome.device + " receives by: " + rxe.link().receivePath());
        }
        out.flush();
    }

    /** JIT time inside a measured window without warm-up from which a run says it measured a JVM still compiling. */
    static final long COLD_JIT_MILLIS = 10;

    /**
     * The line after the footer of a run without warm-up that the JIT compiled in for at least {@value #COLD_JIT_MILLIS}
     * ms: what was measured, and how to measure the steady state. Null otherwise. Without warm-up means against C
     * perftest, which runs exactly -n iterations (two hwlab sides agree on one, {@link PeerOffer}), or with
     * {@code --warmup 0}.
     */
    static String coldJitHint(long warmupIters, long jitMillis, boolean peerIsHwlab) {
        if (warmupIters > 0 || jitMillis < COLD_JIT_MILLIS) {
            return null;
        }
        String why = peerIsHwlab ? "No warm-up (--warmup 0)" : "No warm-up (the peer is not hwlab: C perftest runs"
                + " exactly -n iterations, so none can be agreed)";
        return " " + why + ": the JIT compiled for " + jitMillis + " ms inside the measured window, so these numbers"
                + " include code not yet compiled. For the steady state, measure longer (-n 100000) or by time (-D,"
                + " whose first and last seconds are left out)" + (peerIsHwlab ? ", or leave --warmup out." : ".");
    }

    /**
     * Whether this process can bind a UDP socket to {@code addr}: then it runs both ends of a floor itself, as an
     * in-process run does (the two processes are on one host); else the server's process runs its end.
     */
    static boolean bindsHere(InetAddress addr) {
        try (java.nio.channels.DatagramChannel ch = UdpBaseline.open(addr)) {
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private void udpFloor() {
        InetAddress local = s.gid.toInetAddress();
        InetAddress remote = s.remote[0].gid().toInetAddress();
        if (!p.test().latency()) {
            udpStreamFloor(local, remote);
            return;
        }
        out.printf(" UDP floor: the same ping-pong over plain UDP DatagramChannels %s <-> %s (no RDMA%s):%n",
                local.getHostAddress(), remote.getHostAddress(), remoteFloors != null ? "; the echo in the server's"
                        + " process" : "");
        out.println(PerfReport.LAT_HEADER);
        floorRows(remote, local, UdpFloor.PLAIN);
        PerfTest.Verb verb = p.test().verb();
        if (verb == PerfTest.Verb.WRITE || verb == PerfTest.Verb.SEND) {
            // an RC WRITE or SEND is acknowledged by a packet of its own: a floor that moves what RC must move
            out.printf(" UDP floor with RoCE's ACKs: as above, plus a %d-byte datagram back for every message"
                    + " (request and ACK each way, as RC):%n", UdpBaseline.ACK_SIZE);
            floorRows(remote, local, UdpFloor.ACKS);
            out.printf(" UDP floor with batched ACKs: the same datagrams, each ACK handed to the kernel with the message"
                    + " after it in one call (one GSO datagram on loopback, else sendmmsg), unconnected sockets, batch"
                    + " receives (the calls jhca makes):%n");
            floorRows(remote, local, UdpFloor.BATCHED_ACKS);
        }
        for (int i = 0; i < outcome.latency.size(); i++) {
            LatencyStats[] floors = outcome.floorsAt(i);
            if (floors[0] != null) {
                out.println(Stalls.row(outcome.latency.get(i), floors));
            }
        }
        out.println(PerfReport.LINE);
    }

    /**
     * One UDP floor row per size the test measured ({@link UdpBaseline}, one of the {@link UdpFloor}s), each followed by
     * jhca's figures as multiples of the floor's; every floor is kept in the outcome for the JSON (the plain one for
     * the plot too).
     */
    private void floorRows(InetAddress remote, InetAddress local, UdpFloor floor) {
        int iters = p.durationMode() ? 1000 : p.iters();
        for (LatencyStats rdma : outcome.latency) {
            int size = rdma.size();
            int warm = (int) floorWarmup(size);
            outcome.floorWarmupIters = Math.max(outcome.floorWarmupIters, warm);
            try {
                LatencyStats u = remoteFloors != null
                        ? remoteFloors.latency(floor, size, iters, warm, p.test().rttFactor(),
                                Spin.stallNanos(p.stallMillis()), p.latencyGapNanos())
                        : UdpBaseline.run(remote, local, size, iters, warm, p.test().rttFactor(),
                                p.stallMillis(), floor, p.latencyGapNanos());
                outcome.floor(floor).add(u);
                out.println(u.row());
                out.println(PerfReport.latencyRatioRow(rdma, u, p.latencyGap()));
            } catch (IOException e) {
                out.printf(" %-7d (not measured: %s)%n", size, e.getMessage());
                outcome.floor(floor).add(null);
                if (floor == UdpFloor.PLAIN) {
                    if (outcome.udpSkipped == null) {
                        outcome.udpSkipped = e.getMessage();
                    }
                }
            }
            out.flush();
        }
    }

    /** Bandwidth tests: the same bytes streamed over plain UDP, and jhca's average as a share of it. */
    private void udpStreamFloor(InetAddress local, InetAddress remote) {
        boolean read = p.test().verb() == PerfTest.Verb.READ;
        InetAddress from = read ? remote : local; // READ data flows from the server to the client
        InetAddress to = read ? local : remote;
        out.printf(" UDP stream floor: %s over plain UDP DatagramChannels %s -> %s in datagrams of one MTU"
                + " (%d B), tx depth %d messages (no RDMA%s):%n", p.durationMode() ? "messages of the same size for as long"
                + " as the sample window" : "the same bytes", from.getHostAddress(), to.getHostAddress(), s.mtu.bytes(),
                s.txDepth, remoteFloors != null ? "; the server's end in its process" : "");
        String skipped = streamRows(outcome.udpStream,
                (size, iters, stall, limit) -> streamFloor(read, to, from, size, iters, stall, limit));
        if (outcome.udpSkipped == null) {
            outcome.udpSkipped = skipped;
        }
        if (remoteFloors == null && sendsBursts()) {
            int dgram = UdpStream.datagramSize((int) outcome.bandwidth.get(0).size(), s.mtu.bytes());
            // the stream again as the device sends it on loopback: the plain floor above stays the targets'; this one
            // says how much of jhca's lead over it is the kernel's work that the bursts save
            out.printf(" UDP stream floor by GSO: the same datagrams handed to the kernel %d at a time (UDP_SEGMENT)"
                    + " and taken whole (UDP_GRO), as the device sends its packets on loopback:%n",
                    io.jhca.rxe.link.UdpGso.segmentsPerBurst(dgram));
            streamRows(outcome.udpStreamGso, (size, iters, stall, limit) -> UdpStream.runGso(to, from, size, iters,
                    s.mtu.bytes(), s.txDepth, stall, limit));
        }
        out.println(PerfReport.LINE);
    }

    /** Whether the device sends a message's packets in GSO bursts (an rxe device on loopback, Link#sendBurst). */
    private boolean sendsBursts() {
        return s.ctx instanceof io.jhca.rxe.RxeContext rxe && rxe.link().maxBurst(0) > 0;
    }

    /** One stream floor run: {@code iters} messages of {@code size} bytes, no new one after {@code limitNanos} (0: none). */
    @FunctionalInterface
    private interface StreamRun {
        UdpStream.Result run(int size, long iters, long stallMillis, long limitNanos) throws IOException;
    }

    /**
     * A stream floor's table: per size of the RDMA run, warm-up runs, the measured run, its row with jhca's share, each
     * result (null where it failed) added to {@code into}. Returns why a size was not measured, or null.
     */
    private String streamRows(java.util.List<UdpStream.Result> into, StreamRun floor) {
        out.println(PerfReport.UDP_STREAM_HEADER);
        long jit = 0;
        String skipped = null;
        for (BandwidthStats rdma : outcome.bandwidth) {
            try {
                // a lost datagram stalls the stream: give up sooner than a whole stall timeout
                long stall = Math.min(p.stallMillis() <= 0 ? Long.MAX_VALUE : p.stallMillis(), 5000);
                long warm = floorWarmup((int) rdma.size()) * s.qps.length;
                outcome.floorWarmupIters = Math.max(outcome.floorWarmupIters, warm / s.qps.length);
                if (warm > 0) {
                    // warmed up as the RDMA run was (runs of its own loop, then the JIT idle), not measured: a floor
                    // measured while the compiler works is low, and flatters jhca's ratio
                    for (long part : BandwidthLoops.warmupRuns(warm)) {
                        floor.run((int) rdma.size(), part, stall, 0);
                    }
                    JvmReport.waitForJitIdle();
                }
                // -D: as long as the RDMA run's sample window, not as many messages (the floor may be far slower)
                long limit = p.durationMode() ? DurationClock.sampleNanos(p.duration(), p.margin()) : 0;
                UdpStream.Result u = floor.run((int) rdma.size(), Math.max(1, rdma.iters()), stall, limit);
                jit += u.jitMillis();
                into.add(u);
                out.println(PerfReport.udpStreamRow(u, rdma));
            } catch (IOException e) {
                into.add(null);
                out.printf(" %-7d (not measured: %s)%n", rdma.size(), e.getMessage());
                if (skipped == null) {
                    skipped = e.getMessage();
                }
            }
            out.flush();
        }
        out.println(" JIT compiling during the floor's measurement: " + jit + " ms");
        return skipped;
    }

    /**
     * One stream floor of {@code iters} messages of {@code size} bytes from {@code from} to {@code to} (for a READ the
     * server sends), no new message after {@code limitNanos} (0: none): both ends here, or the server's end in its
     * process ({@link #remoteFloors}).
     */
    private UdpStream.Result streamFloor(boolean read, InetAddress to, InetAddress from, int size, long iters,
            long stallMillis, long limitNanos) throws IOException {
        return remoteFloors != null
                ? remoteFloors.stream(!read, size, iters, s.mtu.bytes(), s.txDepth, Spin.stallNanos(stallMillis),
                        limitNanos)
                : UdpStream.runFor(to, from, size, iters, s.mtu.bytes(), s.txDepth, stallMillis, limitNanos);
    }
}
