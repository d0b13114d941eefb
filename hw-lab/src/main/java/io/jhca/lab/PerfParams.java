package io.jhca.lab;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A resolved {@code hwlab perf} run: the options after defaults (perftest's, per test) have been applied.
 *
 * @param test         which test
 * @param role         server, client, or both in this process
 * @param device       -d: this side's device (in-process: the server's)
 * @param peerDevice   in-process only: the client's device
 * @param ibPort       -i
 * @param size         -s (ignored with -a)
 * @param all          -a: sizes 2..2^23
 * @param iters        -n
 * @param duration     -D seconds, 0 = run iters
 * @param margin       -f seconds left out at both ends of a -D run
 * @param mtu          -m bytes, 0 = the port's active MTU
 * @param gidIndex     -x, null = auto (first IPv4-mapped GID)
 * @param tcpPort      -p (in-process: 0 unless given, so runs never collide)
 * @param numQps       -q
 * @param inlineSize   -I, the largest message sent inline
 * @param txDepth      -t
 * @param rxDepth      -r
 * @param cqMod        -Q, completions requested every cqMod sends (BW)
 * @param reportGbits  --report_gbits
 * @param qpTimeout    -u
 * @param sl           -S
 * @param server       the server host (client role)
 * @param bind         --bind: where the server listens
 * @param json         --json file or null
 * @param plot         --plot file or null
 * @param udpBaseline  print the UDP floor
 * @param stallMillis  a wait without progress for this long fails the run (0 = never)
 * @param useSrq       --use-srq: SEND tests receive through a shared receive queue
 * @param events       -e: sleep on CQ events (completion channels) instead of busy-polling the CQs
 * @param warmup       unmeasured iterations run before the -n measured ones: --warmup, else in-process the test's
 *                     default and with a peer 0 until the version exchange shows the peer is hwlab
 *                     ({@link PeerOffer}, {@link #withWarmup})
 * @param rdmaCm       -R: rdma_cm connects the exchange QP and the test QPs on the -p port (no TCP)
 * @param mcg          --mcg: perftest's multicast mode, UD, the server's QP attached to the group ({@link PerfMcast})
 * @param mgid         -M: the group as given, null = perftest's default MGID
 * @param latencyGap   --latency_gap microseconds waited before each post of a latency test (perftest: a spin before
 *                     the post's time is taken, so every time includes it)
 * @param warmupGiven  whether --warmup gave {@code warmup}
 * @param udpBaselineGiven whether --udp-baseline or --no-udp-baseline gave {@code udpBaseline}; if not, a client whose
 *                     peer is an hwlab that serves the floors measures them too ({@link #udpBaselineWith})
 */
public record PerfParams(PerfTest test, Role role, String device, String peerDevice, int ibPort, int size, boolean all,
                         int iters, int duration, int margin, int mtu, Integer gidIndex, int tcpPort, int numQps, int inlineSize,
                         int txDepth, int rxDepth, int cqMod, boolean reportGbits, int qpTimeout, int sl, String server,
                         String bind, Path json, Path plot, boolean udpBaseline, long stallMillis, boolean useSrq,
                         boolean events, int warmup, boolean rdmaCm, boolean mcg, String mgid, int latencyGap,
                         boolean warmupGiven, boolean udpBaselineGiven) {

    public enum Role { SERVER, CLIENT, BOTH }

    /** The message sizes of the run: with -a 2^1 .. 2^23 (write_lat.c: for (i = 1; i < 24; ++i)), else -s. */
    public List<Integer> sizes() {
        List<Integer> s = new ArrayList<>();
        if (all) {
            for (int i = 1; i < 24; i++) {
                s.add(1 << i);
            }
        } else {
            s.add(size);
        }
        return s;
    }

    public int maxSize() {
        return all ? PerfTest.MAX_SIZE : size;
    }

    /** {@link #latencyGap} in nanoseconds. */
    public long latencyGapNanos() {
        return latencyGap * 1_000L;
    }

    public boolean durationMode() {
        return duration > 0;
    }

    /**
     * Warm-up iterations this run makes before the measured ones, with -n only: latency tests before every size,
     * bandwidth tests (per QP) before the first; not with --mcg, whose UD receiver counts what arrives.
     */
    public int warmupIters() {
        return durationMode() || (mcg && !test.latency()) ? 0 : warmup;
    }

    /** The same run in another role (in-process mode runs one of each). */
    public PerfParams as(Role r, String dev) {
        return new PerfParams(test, r, dev, peerDevice, ibPort, size, all, iters, duration, margin, mtu, gidIndex, tcpPort, numQps,
                inlineSize, txDepth, rxDepth, cqMod, reportGbits, qpTimeout, sl, server, bind, json, plot, udpBaseline,
                stallMillis, useSrq, events, warmup, rdmaCm, mcg, mgid, latencyGap, warmupGiven, udpBaselineGiven);
    }

    /** The same run with the warm-up both sides agreed on ({@link PeerOffer#agree}). */
    public PerfParams withWarmup(int agreed) {
        return new PerfParams(test, role, device, peerDevice, ibPort, size, all, iters, duration, margin, mtu, gidIndex,
                tcpPort, numQps, inlineSize, txDepth, rxDepth, cqMod, reportGbits, qpTimeout, sl, server, bind, json, plot,
                udpBaseline, stallMillis, useSrq, events, agreed, rdmaCm, mcg, mgid, latencyGap, warmupGiven,
                udpBaselineGiven);
    }

    /**
     * What this side offers in the version exchange: --warmup if given, else the in-process default of the test, which
     * a peer that is hwlab runs too ({@link PerfTestCommand#IN_PROCESS_WARMUP}, {@link PerfTestCommand#IN_PROCESS_BW_WARMUP});
     * and the UDP floors' end, except with -R, whose exchange ends on rdma_cm's QP ({@link RemoteFloors}).
     */
    PeerOffer offer() {
        return new PeerOffer(warmupGiven ? warmup : defaultWarmup(test), warmupGiven, !rdmaCm);
    }

    /**
     * Whether the client measures the UDP floors: as --udp-baseline says, else in-process or when {@code peerServes}
     * (two hwlab processes that both serve the floors, {@link PeerOffer#floors}).
     */
    public boolean udpBaselineWith(boolean peerServes) {
        return udpBaselineGiven ? udpBaseline : udpBaseline || peerServes;
    }

    /** The warm-up of an in-process run of {@code t}, and of a two-process run between two hwlab sides. */
    static int defaultWarmup(PerfTest t) {
        return t.latency() ? PerfTestCommand.IN_PROCESS_WARMUP : PerfTestCommand.IN_PROCESS_BW_WARMUP;
    }
}
