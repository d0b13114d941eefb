package io.jhca.lab;

import java.io.Closeable;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntSupplier;

import jdk.net.ExtendedSocketOptions;

import io.jhca.verbs.Context;

/**
 * The out-of-band TCP connection ibv_rc_pingpong and perftest use to swap QP numbers, PSNs, keys and GIDs
 * before any RDMA traffic. Each message is sent with one write and read back whole, because the C tools do a
 * single {@code read()} and compare its length: a message split across two writes could be read short.
 *
 * <p>Reads poll a non-blocking channel. While they wait they call a progress hook: a software device driven
 * from the application's thread (rxe in caller progress mode) must keep answering RDMA traffic while its tool
 * sits in a TCP exchange, as a perftest BW server does for a whole test. As long as the hook reports work the
 * wait spins; once the device has been idle for a while it parks briefly between polls, so a long exchange
 * wait on a device that needs no help (hardware, rxe with its own thread) does not burn a core. A device that
 * needs the waiting thread ({@link Context#progressByCaller()}) is idle for a while between a bandwidth test's
 * warm-up and its measured run (the client waits for the JIT there), and parking there threw the wait loop's
 * compiled code away (a branch never taken before) and had the JIT compile it again inside the measurement, for
 * up to 240 ms of a two-core machine's C2 time; so it parks only after {@value #DRIVING_PARK_AFTER_NANOS} ns idle.
 */
public final class OobLink implements Closeable, PerftestWire {
    /** Idle polls before the wait starts to park, and for how long each time. */
    private static final long SPINS_BEFORE_PARK = 1 << 16;
    private static final long PARK_NANOS = 50_000;
    /** Idle time before a wait that drives its device's progress starts to park: a peer gone, not a pause. */
    static final long DRIVING_PARK_AFTER_NANOS = 10_000_000_000L;
    /** Progress calls that found work between two reads of the socket (see {@link #read}). */
    static final int BUSY_PROGRESS_PER_READ = 64;
    /** How often {@link #readBlocking} wakes to look at its bound. */
    private static final long QUIET_SLICE_MILLIS = 200;

    private final SocketChannel ch;
    private IntSupplier progress = () -> 0;
    /** True if {@link #progress} moves the device (it needs this thread), false if it only reports work. */
    private boolean driving;
    private long timeoutNanos;

    /**
     * TCP keepalive: a peer whose host went away (powered off, unplugged) closes nothing, and the exchange's reads,
     * some of which span the peer's whole measurement (a bandwidth server waits for the client's report), would wait
     * for ever. The kernel probes after this long without traffic, then every {@link #KEEPALIVE_INTERVAL_SECONDS},
     * and fails the connection after {@link #KEEPALIVE_PROBES} unanswered probes: about 25 s. A peer alive but
     * silent (stopped) still answers them, as it would the C tools. Bytes of ours left unacknowledged fail it after as
     * long ({@link TcpUserTimeout}): keepalive does not probe while they are in flight.
     */
    static final int KEEPALIVE_IDLE_SECONDS = 10;
    static final int KEEPALIVE_INTERVAL_SECONDS = 5;
    static final int KEEPALIVE_PROBES = 3;

    private OobLink(SocketChannel ch) throws IOException {
        this.ch = ch;
        ch.socket().setTcpNoDelay(true);
        keepAlive(KEEPALIVE_IDLE_SECONDS, KEEPALIVE_INTERVAL_SECONDS, KEEPALIVE_PROBES);
    }

    /**
     * Sets the keepalive timing (seconds of silence before the first probe, seconds between probes, unanswered probes
     * that fail the connection) in place of the defaults above; the timing itself only where the platform lets it be
     * set (Linux does).
     */
    public OobLink keepAlive(int idleSeconds, int intervalSeconds, int probes) throws IOException {
        ch.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
        if (ch.supportedOptions().contains(ExtendedSocketOptions.TCP_KEEPIDLE)) {
            ch.setOption(ExtendedSocketOptions.TCP_KEEPIDLE, idleSeconds);
            ch.setOption(ExtendedSocketOptions.TCP_KEEPINTERVAL, intervalSeconds);
            ch.setOption(ExtendedSocketOptions.TCP_KEEPCOUNT, probes);
        }
        // the same bound for our own unacknowledged bytes (and, as Linux applies it, for the probes too)
        TcpUserTimeout.set(ch, (idleSeconds + intervalSeconds * probes) * 1000);
        return this;
    }

    /**
     * A listening socket on {@code bind}:{@code port} (0 picks a free port). SO_REUSEADDR as rc_pingpong sets it,
     * so a quick rerun does not fail on a socket in TIME_WAIT.
     */
    public static ServerSocket listen(InetAddress bind, int port) throws IOException {
        ServerSocketChannel ssc = ServerSocketChannel.open();
        ServerSocket ss = ssc.socket();
        ss.setReuseAddress(true);
        try {
            ss.bind(new InetSocketAddress(bind, port), 1);
        } catch (IOException e) {
            ssc.close();
            throw new IOException("cannot listen on " + bind.getHostAddress() + ":" + port + ": " + e.getMessage(), e);
        }
        return ss;
    }

    /** Where {@code ss} listens, for the startup line: "all addresses, TCP port 18515" or "127.0.0.1:18515". */
    public static String describe(ServerSocket ss) {
        InetAddress a = ss.getInetAddress();
        if (a == null || a.isAnyLocalAddress()) {
            return "all addresses, TCP port " + ss.getLocalPort();
        }
        return (a instanceof java.net.Inet6Address ? "[" + a.getHostAddress() + "]" : a.getHostAddress()) + ":" + ss.getLocalPort();
    }

    /**
     * Waits for one client ({@code timeoutMillis} 0 = forever) and closes the listening socket, as the tools do.
     * {@code ss} must come from {@link #listen}.
     */
    public static OobLink accept(ServerSocket ss, int timeoutMillis) throws IOException {
        if (ss.getChannel() == null) {
            throw new IllegalArgumentException("accept needs a ServerSocket made by OobLink.listen");
        }
        try (ss) {
            ss.setSoTimeout(timeoutMillis);
            // ServerSocket.accept honours the timeout for a channel's socket too (the channel stays blocking)
            return new OobLink(ss.accept().getChannel());
        } catch (SocketTimeoutException e) {
            throw new IOException("no client connected to " + ss.getLocalSocketAddress() + " within " + timeoutMillis + " ms");
        }
    }

    public static OobLink connect(String host, int port, int timeoutMillis) throws IOException {
        SocketChannel ch = SocketChannel.open();
        try {
            ch.socket().connect(new InetSocketAddress(host, port), timeoutMillis);
        } catch (IOException e) {
            ch.close();
            throw new IOException("couldn't connect to " + host + ":" + port + ": " + e.getMessage(), e);
        }
        return new OobLink(ch);
    }

    /** Read timeout for every later read (0 = forever). */
    public OobLink readTimeout(int millis) {
        timeoutNanos = millis * 1_000_000L;
        return this;
    }

    /** Called while a read waits; returns the amount of work it did. {@code driving}: see {@link OobLink}. */
    public OobLink whileWaiting(IntSupplier hook, boolean driving) {
        this.progress = hook;
        this.driving = driving;
        return this;
    }

    /** Drives {@code ctx}'s progress while a read waits ({@code ctx::progress}). */
    public OobLink whileWaiting(Context ctx) {
        return whileWaiting(ctx::progress, ctx.progressByCaller());
    }

    /** Sends one message with a single write (a blocking channel writes it whole). */
    public void write(byte[] msg) throws IOException {
        ch.configureBlocking(true);
        ByteBuffer b = ByteBuffer.wrap(msg);
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    /** Reads exactly {@code n} bytes. */
    public byte[] read(int n) throws IOException {
        ch.configureBlocking(false);
        ByteBuffer b = ByteBuffer.allocate(n);
        long start = System.nanoTime();
        long idle = 0;
        long idleSince = start;
        long parkAfter = driving ? Long.MAX_VALUE : SPINS_BEFORE_PARK; // idle polls
        while (b.hasRemaining()) {
            int r;
            try {
                r = ch.read(b);
            } catch (IOException e) {
                // ETIMEDOUT after unanswered keepalive probes or unacknowledged bytes; ECONNRESET from a peer whose
                // host restarted
                String m = String.valueOf(e.getMessage());
                throw new IOException("the exchange connection to the peer failed after " + b.position() + " of " + n
                        + " bytes: " + m + (m.contains("timed out") ? " (is the peer's host gone?)" : ""), e);
            }
            if (r < 0) {
                throw new EOFException("peer closed the connection after " + b.position() + " of " + n + " bytes");
            }
            if (r > 0) {
                continue;
            }
            // while the device has work, drive it and look at the socket only every BUSY_PROGRESS_PER_READ calls: a
            // read is a system call, and a BW server's whole test is this wait
            int busy = 0;
            while (busy < BUSY_PROGRESS_PER_READ && progress.getAsInt() > 0) {
                busy++;
            }
            if (busy > 0) {
                idle = 0;
                if (driving) {
                    parkAfter = Long.MAX_VALUE;
                }
            } else if (++idle < Spin.SPINS_BEFORE_YIELD) {
                if (idle == 1) {
                    idleSince = System.nanoTime();
                }
                Thread.onSpinWait();
            } else if (idle < parkAfter) {
                Thread.yield();
            } else {
                LockSupport.parkNanos(PARK_NANOS);
            }
            if ((idle & 255) == 0) {
                long now = System.nanoTime();
                if (timeoutNanos > 0 && now - start > timeoutNanos) {
                    throw new IOException("timed out waiting for the peer (" + b.position() + " of " + n
                            + " bytes received)");
                }
                if (driving && idle > 0 && now - idleSince > DRIVING_PARK_AFTER_NANOS) {
                    parkAfter = idle;
                }
            }
        }
        return b.array();
    }

    /**
     * Reads exactly {@code n} bytes sleeping in the kernel until they come, with no progress calls: for a wait that
     * must leave the cores to other work (the server's end of a UDP floor, {@link RemoteFloors}). A peer that closes
     * the connection ends it; one that sends nothing for {@code quietNanos} ({@link Long#MAX_VALUE}: forever) while
     * {@code busy} (null: none) is not running fails it, so a peer whose host went away, which closes nothing, does not
     * keep this side waiting for ever. While {@code busy} runs the quiet time does not count: it is this side's end of
     * a measurement, which has its own stall bound.
     */
    byte[] readBlocking(int n, long quietNanos, Thread busy) throws IOException {
        ch.configureBlocking(true);
        java.net.Socket s = ch.socket();
        // the channel's socket adaptor honours SO_TIMEOUT, the channel's own read does not
        s.setSoTimeout((int) Math.max(1, Math.min(QUIET_SLICE_MILLIS, quietNanos / 1_000_000L)));
        try {
            java.io.InputStream in = s.getInputStream();
            byte[] b = new byte[n];
            int got = 0;
            long quietSince = System.nanoTime();
            while (got < n) {
                int r;
                try {
                    r = in.read(b, got, n - got);
                } catch (SocketTimeoutException e) {
                    long now = System.nanoTime();
                    if (busy != null && busy.isAlive()) {
                        quietSince = now;
                    } else if (now - quietSince >= quietNanos) {
                        throw new IOException("nothing from the peer for " + (now - quietSince) / 1_000_000L + " ms ("
                                + got + " of " + n + " bytes came); is it gone? (--stall-timeout)");
                    }
                    continue;
                }
                if (r < 0) {
                    throw new EOFException("peer closed the connection after " + got + " of " + n + " bytes");
                }
                got += r;
                quietSince = System.nanoTime();
            }
            return b;
        } finally {
            s.setSoTimeout(0);
        }
    }

    public InetAddress peerAddress() {
        return ch.socket().getInetAddress();
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
