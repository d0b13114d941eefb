package io.jhca.lab;

import io.jhca.rxe.RxeContext;
import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import io.jhca.verbs.Context;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.Writer;
import java.net.InetAddress;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The warm-up of a run against C perftest, which runs exactly -n iterations and cannot be asked for more: before the
 * measured run, the same test runs in this process, in {@value #RUNS} short runs, each between two fresh rxe devices
 * that move packets as the run's device does ({@link RxeDeviceConfig#twin}) at unused loopback addresses. The C peer
 * waits meanwhile in its next exchange step, as it waits for any slow peer.
 *
 * <p>Why fresh devices and many runs: C2 compiles a branch never taken as a trap, and a trap taken at the first
 * measured packet throws the compiled code away, so the measured run then runs in the interpreter while C2 compiles
 * again. A warm-up on one device talking to itself did just that in six methods (a datagram from another address, a
 * new peer, a new QP's first use by its thread): t_typical 45-62 us against 3.0 with a warm-up agreed between two
 * hwlab processes. With every run's engines seeing a new sender, a new peer and new QPs, those branches are compiled
 * in: 2.89-3.05 us (tests/benchmarks/HISTORY.md, round 30).
 *
 * <p>A run with -R warms up with -R too: its twins connect through rdma_cm, so that the CM's MADs on QP1 (UD, another
 * path through the engine's receive code) and the exchange QP's messages have passed through the compiled data path
 * before the measured run's do. Warmed up over TCP, the real run's rdma_cm traffic hit traps in the engine's hottest
 * methods, which were recompiled inside the measured window (against the interop test's guest 163-790 ms of
 * compiling in it, since 2-52 ms).
 * Separate sides with -R warm up before they connect ({@link PerfCmMain}).
 */
final class PrivateWarmup {
    /** Short runs the warm-up is cut into. */
    static final int RUNS = 20;
    /** Tries at a free pair of loopback addresses for a run before the warm-up gives up. */
    private static final int ADDRESS_TRIES = 4;

    private PrivateWarmup() {
    }

    /**
     * The rxe device whose twins warm the run on {@code ctx} up, or null if the run gets no private warm-up: it needs an
     * rxe device on an address (not an interface's, whose link is another), without faults or capture (paths a twin
     * would not take), a run counted in iterations (-D has its margin), no --mcg (a group of this host), and no
     * --warmup (which the peer runs too).
     */
    static RxeContext twinnable(PerfParams p, Context ctx) {
        if (!(ctx instanceof RxeContext rxe) || p.durationMode() || p.mcg() || p.warmupGiven()) {
            return null;
        }
        RxeDeviceConfig c = rxe.config();
        return c.netdev() != null || c.hasFaults() || c.pcap() != null ? null : rxe;
    }

    /**
     * What a warm-up did: the runs made, the iterations they ran (per QP for bandwidth tests), and why it stopped
     * before {@value #RUNS} runs (null if it did not). A warm-up that stops leaves the measured run to go on.
     */
    record Result(int runs, int iters, String stopped) {
    }

    /**
     * Runs the warm-up for the test of {@code p} on twins of {@code ctx}'s device (see {@link #twinnable}), then waits for
     * the JIT to go idle. A run that fails (no two free addresses, a twin's error) ends the warm-up, not the caller's
     * run: its device is not involved.
     */
    static Result run(PerfParams p, RxeContext ctx) {
        int per = Math.max(1, PerfParams.defaultWarmup(p.test()) / RUNS);
        RxeDeviceConfig real = ctx.config();
        PrintWriter quiet = new PrintWriter(Writer.nullWriter());
        int r = 0;
        String stopped = null;
        try {
            for (; r < RUNS; r++) {
                Context[] pair = twins(real, r);
                if (pair == null) {
                    stopped = "no two free loopback addresses for its twins";
                    break;
                }
                PerfParams wp = new PerfParams(p.test(), PerfParams.Role.BOTH, pair[0].name(), pair[1].name(), p.ibPort(),
                        p.sizes().get(0), false, per, 0, p.margin(), p.mtu(), null, 0, p.numQps(), p.inlineSize(),
                        p.txDepth(), p.rxDepth(), p.cqMod(), p.reportGbits(), p.qpTimeout(), p.sl(), null, null, null, null,
                        false, p.stallMillis(), p.useSrq(), p.events(), 0, p.rdmaCm(), false, null, p.latencyGap(), true,
                        true);
                if (p.rdmaCm()) {
                    PerfCmMain.both(wp, quiet, pair[0], pair[1]);
                } else {
                    PerfMain.both(wp, quiet, pair[0], pair[1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            stopped = HwLab.describe(e);
        }
        JvmReport.waitForJitIdle();
        return new Result(r, r * per, stopped);
    }

    /**
     * Two twins of {@code real} at 127.X.Y.(2r+1) and 127.X.Y.(2r+2), X.Y drawn at random (another process may warm up
     * at the same time), both opened; null if {@value #ADDRESS_TRIES} draws found no free pair. In odd runs the twins
     * compute their ICRCs as if their packets carried non-zero IPv4 IDs, as Linux rxe's do
     * ({@link RxeDeviceConfig#twin(String, InetAddress, boolean)}): a peer's receiver checks jhca's packets in full
     * and solves for the ID of Linux rxe's, and the run may face either.
     */
    private static Context[] twins(RxeDeviceConfig real, int r) throws java.net.UnknownHostException {
        ThreadLocalRandom rnd = ThreadLocalRandom.current();
        for (int tries = 0; tries < ADDRESS_TRIES; tries++) {
            byte x = (byte) (64 + rnd.nextInt(128));
            byte y = (byte) rnd.nextInt(256);
            InetAddress a = InetAddress.getByAddress(new byte[] {127, x, y, (byte) (2 * r + 1)});
            InetAddress b = InetAddress.getByAddress(new byte[] {127, x, y, (byte) (2 * r + 2)});
            Context ca = null;
            try {
                boolean likeLinuxRxe = (r & 1) != 0;
                ca = RxeProvider.open(real.twin(real.name() + "-warm" + (2 * r), a, likeLinuxRxe));
                return new Context[] {ca, RxeProvider.open(real.twin(real.name() + "-warm" + (2 * r + 1), b,
                        likeLinuxRxe))};
            } catch (RuntimeException e) { // the address is taken (another process, the kernel's rdma_rxe): draw again
                if (ca != null) {
                    ca.close();
                }
            }
        }
        return null;
    }
}
