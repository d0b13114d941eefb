package io.jhca.lab;

import java.util.ArrayList;
import java.util.List;

/** What one side of a perf run measured and ran with: the source of the JSON and of the plot. */
public final class PerfOutcome {
    final PerfParams params;
    final List<LatencyStats> latency = new ArrayList<>();
    final List<BandwidthStats> bandwidth = new ArrayList<>();
    /** UDP floor per size (same order as {@link #latency}); null entries where it was not run. */
    final List<LatencyStats> udp = new ArrayList<>();
    /** The UDP floor with RoCE's ACKs per size (WRITE and SEND latency tests; same order as {@link #latency}). */
    final List<LatencyStats> udpAcks = new ArrayList<>();
    /** The UDP floor with RoCE's ACKs batched with the next message (as {@link #udpAcks}). */
    final List<LatencyStats> udpBatchedAcks = new ArrayList<>();
    String udpSkipped;
    /** Whether the floors' other end ran in the server's process (the client could not bind its address). */
    boolean floorsAtServer;
    /** Round trips (latency) or messages per QP (bandwidth, first size) the UDP floors ran before measuring; -1: none ran. */
    long floorWarmupIters = -1;
    /** UDP stream floor per size of a bandwidth test (same order as {@link #bandwidth}); null where not run. */
    final List<UdpStream.Result> udpStream = new ArrayList<>();
    /** The same floor by GSO sends (a device that sends bursts, in-process floors only); empty where not run. */
    final List<UdpStream.Result> udpStreamGso = new ArrayList<>();
    String device;
    String peerDevice;
    String role;
    String remoteVersion;
    /** Warm-up iterations run before the measured ones (agreed with the peer in a two-process run). */
    int warmupIters;
    /** Iterations of the private warm-up run before a run against C perftest ({@link PrivateWarmup}), else 0. */
    int privateWarmupIters;
    /** Whether the peer offered a warm-up in the version exchange, as hwlab does (C perftest does not). */
    boolean peerIsHwlab;
    int gidIndex;
    int mtu;
    int txDepth;
    int rxDepth;
    int cqMod;
    int inlineSize;
    int outReads;
    String transport;
    String linkLayer;
    JvmReport jvm;

    PerfOutcome(PerfParams params) {
        this.params = params;
    }

    /** The rows of {@code floor}, per size. */
    List<LatencyStats> floor(UdpFloor floor) {
        return switch (floor) {
            case PLAIN -> udp;
            case ACKS -> udpAcks;
            case BATCHED_ACKS -> udpBatchedAcks;
        };
    }

    /** Every floor's row of size {@code i}, in {@link UdpFloor} order, null where one was not run. */
    LatencyStats[] floorsAt(int i) {
        UdpFloor[] all = UdpFloor.values();
        LatencyStats[] rows = new LatencyStats[all.length];
        for (int f = 0; f < all.length; f++) {
            rows[f] = at(floor(all[f]), i);
        }
        return rows;
    }

    /** Entry {@code i} of one of the per-size lists, or null where that size has none (a floor not run). */
    static <T> T at(List<T> list, int i) {
        return i < list.size() ? list.get(i) : null;
    }

    public List<LatencyStats> latency() {
        return latency;
    }

    public List<BandwidthStats> bandwidth() {
        return bandwidth;
    }

    public List<LatencyStats> udp() {
        return udp;
    }

    public JvmReport jvm() {
        return jvm;
    }
}
