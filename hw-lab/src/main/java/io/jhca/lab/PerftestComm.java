package io.jhca.lab;

import io.jhca.verbs.Mtu;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * perftest's out-of-band TCP exchange (src/perftest_communication.c), steps in rocev2.md section 4.2. Every step
 * is one fixed-size message each way: the client writes then reads, the server reads then writes
 * (ctx_xchg_data_ethernet, ctx_hand_shake). jhca advertises version "6.06" and behaves as perftest 6.06 does;
 * each optional step is gated on the <em>peer's</em> version string, as perftest gates it.
 */
public final class PerftestComm implements AutoCloseable {
    /** The version this implementation speaks (Debian bookworm's perftest 4.5-0.17 prints "Version: 6.06"). */
    public static final String VERSION = "6.06";
    /** perftest_parameters.h MAX_VERSION: char version[16]. */
    public static final int VERSION_SIZE = 16;
    /** ctx_close_connection writes sizeof "done". */
    static final byte[] DONE = {'d', 'o', 'n', 'e', 0};

    private final PerftestWire link;
    private final boolean client;
    /** -R: keys travel as the binary struct pingpong_dest and no "done" ends the exchange (rdma_write_keys). */
    private final boolean rdmaCm;
    private String remoteVersion = VERSION;
    private PeerOffer peerOffer;
    /** The connection stays open after "done" for the UDP floors ({@link RemoteFloors}). */
    private boolean keepOpen;
    /** Whether this side wrote "done" (and so did the peer, running the same test). */
    private boolean doneWritten;
    /** Whether {@link #exchangeVersions(PeerOffer)} sends its offer: tests turn it off to stand in for C perftest. */
    static volatile boolean sendOffers = true;

    public PerftestComm(OobLink link, boolean client) {
        this(link, client, false);
    }

    PerftestComm(PerftestWire link, boolean client, boolean rdmaCm) {
        this.link = link;
        this.client = client;
        this.rdmaCm = rdmaCm;
    }

    public boolean isClient() {
        return client;
    }

    /** One exchange of equal-size messages in perftest's order; returns the peer's message. */
    public byte[] exchange(byte[] mine) throws IOException {
        if (client) {
            link.write(mine);
            return link.read(mine.length);
        }
        byte[] theirs = link.read(mine.length);
        link.write(mine);
        return theirs;
    }

    /** Step 1, exchange_versions: 16 bytes, "6.06" and NULs, as perftest sends them. Returns the peer's version. */
    public String exchangeVersions() throws IOException {
        return exchangeVersions(null);
    }

    /**
     * Step 1 with this side's offer after the version string's NUL ({@link PeerOffer}; null: NULs, as perftest).
     * Returns the peer's version; {@link #peerOffer()} then holds the peer's offer, if it made one.
     */
    String exchangeVersions(PeerOffer offer) throws IOException {
        byte[] mine = new byte[VERSION_SIZE];
        byte[] v = VERSION.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(v, 0, mine, 0, v.length);
        if (offer != null && sendOffers) {
            offer.writeInto(mine);
        }
        byte[] theirs = exchange(mine);
        int n = 0;
        while (n < theirs.length && theirs[n] != 0) {
            n++;
        }
        remoteVersion = new String(theirs, 0, n, StandardCharsets.US_ASCII);
        peerOffer = PeerOffer.readFrom(theirs);
        // check_version_compatibility: perftest refuses peers older than 5.70
        if (versionNumber(remoteVersion) < 5.70) {
            throw new IOException("Current implementation is not compatible with versions older than 5.70 (peer sent '"
                    + remoteVersion + "')");
        }
        return remoteVersion;
    }

    /** What the peer offered in the version exchange: null for C perftest (or an hwlab that offered none). */
    PeerOffer peerOffer() {
        return peerOffer;
    }

    /** Keeps the connection open after {@link #closeConnection}'s "done": the UDP floors follow on it. */
    void keepOpenAfterDone() {
        keepOpen = true;
    }

    /**
     * After {@link #closeConnection} on a connection kept open, takes the "done" the peer wrote (C perftest never
     * reads it; the floors that follow need the bytes after it), and returns the connection.
     */
    PerftestWire afterDone() throws IOException {
        if (doneWritten) {
            byte[] theirs = link.read(DONE.length);
            if (!java.util.Arrays.equals(theirs, DONE)) {
                throw new IOException("the peer's last exchange message is not \"done\"");
            }
            doneWritten = false;
        }
        return link;
    }

    public String remoteVersion() {
        return remoteVersion;
    }

    /**
     * Step 2, check_sys_data (peer &gt;= 5.32): cycle_buffer and cache_line_size as 4-byte big-endian ints (htonl);
     * both sides take the maximum. Returns {cycleBuffer, cacheLineSize}.
     */
    public int[] checkSysData(int cycleBuffer, int cacheLineSize) throws IOException {
        if (!(versionNumber(remoteVersion) >= 5.32)) {
            return new int[] {cycleBuffer, cacheLineSize};
        }
        int remCycle = ByteBuffer.wrap(exchange(ByteBuffer.allocate(4).putInt(cycleBuffer).array())).getInt();
        int remCache = ByteBuffer.wrap(exchange(ByteBuffer.allocate(4).putInt(cacheLineSize).array())).getInt();
        return new int[] {Math.max(cycleBuffer, remCycle), Math.max(cacheLineSize, remCache)};
    }

    /**
     * Step 3, check_mtu (peer &gt;= 5.1): the MTU enum value as a decimal string, 2 bytes ("5\0") for peers
     * &gt;= 5.31, else 4; both take the smaller valid value.
     */
    public Mtu checkMtu(Mtu mine) throws IOException {
        double rv = versionNumber(remoteVersion);
        if (!(rv >= 5.1)) {
            return mine;
        }
        byte[] msg = new byte[rv >= 5.31 ? 2 : 4];
        byte[] digits = Integer.toString(mine.value()).getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(digits, 0, msg, 0, Math.min(digits.length, msg.length - 1));
        byte[] theirs = exchange(msg);
        int rem = leadingInt(theirs);
        // valid_mtu_size: IBV_MTU_256 (1) .. IBV_MTU_4096 (5)
        if (rem >= 1 && rem <= 5 && mine.value() > rem) {
            return Mtu.of(rem);
        }
        return mine;
    }

    /** Steps 5 and 7, ctx_hand_shake: one key message each way. */
    public PerftestDest handshake(PerftestDest mine) throws IOException {
        if (rdmaCm) {
            return PerftestDest.decodeBinary(exchange(mine.encodeBinary()));
        }
        return PerftestDest.decode(exchange(mine.encode()));
    }

    /**
     * Step 8, xchg_bw_reports: size (8 bytes), iterations (8 bytes if the peer is &gt;= 5.33, else 4), then BW peak,
     * BW average and message rate as byte-swapped (big-endian) IEEE doubles, each its own exchange.
     */
    public BwReport exchangeBwReports(BwReport mine) throws IOException {
        long size = ByteBuffer.wrap(exchange(ByteBuffer.allocate(8).putLong(mine.size()).array())).getLong();
        long iters;
        if (versionNumber(remoteVersion) >= 5.33) {
            iters = ByteBuffer.wrap(exchange(ByteBuffer.allocate(8).putLong(mine.iters()).array())).getLong();
        } else {
            iters = ByteBuffer.wrap(exchange(ByteBuffer.allocate(4).putInt((int) mine.iters()).array())).getInt();
        }
        double peak = exchangeDouble(mine.bwPeak());
        double avg = exchangeDouble(mine.bwAvg());
        double rate = exchangeDouble(mine.msgRate());
        // the server prints the client's report as the run's result: a negative size or count, or a rate that is no
        // number, is not one. The client does not look (C perftest's server sends a struct it never filled in).
        if (!client && (size < 0 || iters < 0 || !(peak >= 0 && avg >= 0 && rate >= 0)
                || Double.isInfinite(peak + avg + rate))) {
            throw new IOException("the client's bandwidth report is out of range: size " + size + ", iterations "
                    + iters + ", BW peak " + peak + ", BW average " + avg + ", MsgRate " + rate);
        }
        return new BwReport(size, iters, peak, avg, rate);
    }

    private double exchangeDouble(double v) throws IOException {
        return ByteBuffer.wrap(exchange(ByteBuffer.allocate(8).putDouble(v).array())).getDouble();
    }

    /**
     * ctx_close_connection: a last handshake, then "done" (5 bytes) written, never read, and the socket closed (kept
     * open for the floors of two hwlab sides, {@link #keepOpenAfterDone}).
     */
    public void closeConnection(PerftestDest mine) throws IOException {
        handshake(mine);
        if (rdmaCm) {
            return; // ctx_close_connection: the "done" write is for the socket exchange only
        }
        link.write(DONE);
        doneWritten = true;
        if (!keepOpen) {
            link.close();
        }
    }

    @Override
    public void close() throws IOException {
        link.close();
    }

    /** perftest compares versions with atof(): the leading decimal number ("6.06" -> 6.06, garbage -> 0). */
    static double versionNumber(String v) {
        int end = 0;
        boolean dot = false;
        while (end < v.length() && (Character.isDigit(v.charAt(end)) || (v.charAt(end) == '.' && !dot))) {
            dot |= v.charAt(end) == '.';
            end++;
        }
        if (end == 0 || (end == 1 && dot)) {
            return 0;
        }
        return Double.parseDouble(v.substring(0, end));
    }

    private static int leadingInt(byte[] b) {
        int v = 0;
        int i = 0;
        boolean any = false;
        while (i < b.length && b[i] >= '0' && b[i] <= '9') {
            v = v * 10 + (b[i] - '0');
            i++;
            any = true;
        }
        return any ? v : 0;
    }

    /** perftest's struct bw_report_data, the part that is exchanged. */
    public record BwReport(long size, long iters, double bwPeak, double bwAvg, double msgRate) {
    }
}
