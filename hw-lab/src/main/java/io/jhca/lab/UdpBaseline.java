package io.jhca.lab;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The UDP floor: the same ping-pong as a latency test, over two plain non-blocking DatagramChannels between the
 * same two addresses, with no RDMA at all; both ends busy-poll as the rxe engine does. Whatever a UDP-based
 * RoCE implementation adds (headers, ICRC, the transport state machine, completions) sits on top of this.
 * Measured and reported exactly as the RDMA test (same deltas, same rtt factor, same statistics, the same
 * unmeasured warm-up round trips first; with -D, whose RDMA run leaves its first seconds out instead, as many as an -n
 * run warms up with). Its two ends run in two threads here, or in two processes ({@link RemoteFloors}).
 */
public final class UdpBaseline {
    /** Largest UDP payload over IPv4. */
    public static final int MAX_PAYLOAD = 65507;

    private UdpBaseline() {
    }

    /**
     * A RoCE ACK's size: BTH, AETH and ICRC (IBTA 9.2, 9.3.1), what an RC responder sends back for a message
     * besides any answer of its application.
     */
    public static final int ACK_SIZE = 20;

    /**
     * Runs {@code warmup} unmeasured and then {@code iters} measured round trips of {@code size} bytes from
     * {@code clientAddr} to {@code serverAddr} and back. With {@link UdpFloor#ACKS}, each side also sends a
     * {@value #ACK_SIZE}-byte datagram back for every message it receives, before its answer, and reads the one it
     * is owed: the datagrams an RC ping-pong of WRITEs or SENDs must move (request and ACK each way), with nothing
     * of RDMA's own work; with {@link UdpFloor#BATCHED_ACKS} those datagrams go out as jhca's rxe sends them, each ACK
     * with the message after it in one call ({@link BatchedAckFloor}); {@link UdpFloor#PLAIN}, one datagram each
     * way. A {@code gapNanos} wait comes before every message, the answer's too when both sides send (rttFactor 2), as
     * perftest's --latency_gap on both sides of a ping-pong; none in the warm-up.
     *
     * @throws IOException when an address is not local (cannot be bound here) or a round trip stalls
     */
    static LatencyStats run(InetAddress serverAddr, InetAddress clientAddr, int size, int iters, int warmup,
                            int rttFactor, long stallMillis, UdpFloor floor, long gapNanos) throws IOException {
        if (size > MAX_PAYLOAD) {
            throw new IOException(size + "-byte messages do not fit one UDP datagram (max " + MAX_PAYLOAD + ")");
        }
        long stallNanos = Spin.stallNanos(stallMillis);
        if (floor == UdpFloor.BATCHED_ACKS) {
            return BatchedAckFloor.run(serverAddr, clientAddr, size, iters, warmup, rttFactor, stallNanos, gapNanos);
        }
        boolean acks = floor == UdpFloor.ACKS;
        int total = warmup + iters;
        DatagramChannel srv = open(serverAddr);
        try (DatagramChannel cli = open(clientAddr)) {
            srv.connect(cli.getLocalAddress());
            cli.connect(srv.getLocalAddress());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread echo = FloorThread.start("hwlab-udp-echo", failure,
                    () -> echo(srv, size, total, acks, rttFactor, warmup, gapNanos, stallNanos));
            long[] tposted;
            try {
                tposted = client(cli, size, iters, warmup, acks, gapNanos, stallNanos);
            } finally {
                srv.close(); // ends the echo thread if the client side stopped early
                FloorThread.join(echo);
            }
            if (failure.get() != null && !(failure.get() instanceof java.nio.channels.ClosedChannelException)) {
                throw new IOException("UDP echo failed: " + failure.get().getMessage(), failure.get());
            }
            return stats(size, tposted, rttFactor);
        } finally {
            srv.close();
        }
    }

    /**
     * The echo end of the {@link UdpFloor#PLAIN} or (with {@code acks}) {@link UdpFloor#ACKS} floor, on {@code srv}
     * connected to the client's socket: {@code total} messages answered. Ends early when {@code srv} is closed.
     */
    static void echo(DatagramChannel srv, int size, int total, boolean acks, int rttFactor, int warmup, long gapNanos,
                     long stallNanos) throws IOException {
        ByteBuffer b = pageAligned(Math.max(size, 1));
        ByteBuffer ack = ByteBuffer.allocateDirect(ACK_SIZE);
        for (int i = 0; i < total; i++) {
            b.clear();
            awaitRead(srv, b, stallNanos);
            b.flip();
            if (acks) {
                ack.clear();
                srv.write(ack);   // the request's ACK, then the answer
            }
            if (rttFactor == 2) {   // --latency_gap, as the RDMA side waits; the phase masked in
                Spin.forNanos(LatencyLoops.gapBefore(i, warmup, gapNanos), null);
            }
            while (b.hasRemaining()) {
                srv.write(b);
            }
            if (acks) {
                ack.clear();
                awaitRead(srv, ack, stallNanos);   // the answer's ACK
            }
        }
    }

    /**
     * The measuring end of the same floor, on {@code cli} connected to the echo's socket: {@code warmup} unmeasured
     * and {@code iters} measured round trips; returns the measured ones' post times.
     */
    static long[] client(DatagramChannel cli, int size, int iters, int warmup, boolean acks, long gapNanos,
                         long stallNanos) throws IOException {
        long[] tposted = new long[iters];
        ByteBuffer b = pageAligned(Math.max(size, 1));
        ByteBuffer ack = ByteBuffer.allocateDirect(ACK_SIZE);
        for (int i = 0; i < warmup + iters; i++) {
            b.clear().limit(size);
            // --latency_gap, as the RDMA side waits; no branch on the phase, as in the RDMA loops (PostStamps)
            Spin.forNanos(LatencyLoops.gapBefore(i, warmup, gapNanos), null);
            tposted[PostStamps.slot(i, warmup)] = System.nanoTime();
            while (b.hasRemaining()) {
                cli.write(b);
            }
            if (acks) {
                ack.clear();
                awaitRead(cli, ack, stallNanos);   // the request's ACK comes first
            }
            b.clear();
            awaitRead(cli, b, stallNanos);
            if (acks) {
                ack.clear();
                cli.write(ack);
            }
        }
        return tposted;
    }

    /** The statistics of the intervals between consecutive posts, as the RDMA test computes its own. */
    static LatencyStats stats(int size, long[] tposted, int rttFactor) {
        long[] d = new long[tposted.length - 1];
        for (int i = 0; i < d.length; i++) {
            d[i] = tposted[i + 1] - tposted[i];
        }
        return LatencyStats.of(size, d, rttFactor);
    }

    /**
     * A buffer that starts on a page, as the rxe engine's receive slots do: the kernel copied a datagram into a buffer
     * 64 bytes past a page boundary at half speed (4K aliasing), and a floor must not be slowed by where malloc put
     * its buffer.
     */
    static ByteBuffer pageAligned(int size) {
        return org.agrona.BufferUtil.allocateDirectAligned(size, 4096);
    }

    /** A non-blocking DatagramChannel bound to {@code addr} on a free port. */
    static DatagramChannel open(InetAddress addr) throws IOException {
        DatagramChannel ch = DatagramChannel.open();
        try {
            ch.bind(new InetSocketAddress(addr, 0));
        } catch (IOException e) {
            ch.close();
            throw cannotBind(addr, e);
        }
        ch.configureBlocking(false);
        return ch;
    }

    /** A floor's socket could not be bound to {@code addr}. */
    static IOException cannotBind(InetAddress addr, Exception e) {
        return new IOException("cannot bind UDP to " + addr.getHostAddress() + " (not a local address?): "
                + e.getMessage(), e);
    }

    private static void awaitRead(DatagramChannel ch, ByteBuffer b, long stallNanos) throws IOException {
        long start = 0;
        long spins = 0;
        while (ch.read(b) <= 0) {
            Spin.idle(++spins);
            if ((spins & 1023) == 0) {
                start = stallCheck(start, stallNanos);
            }
        }
    }

    /**
     * A floor's wait, every 1024 idle spins: returns the wait's start (now, on its first call) and throws once the
     * wait has lasted {@code stallNanos}.
     */
    static long stallCheck(long start, long stallNanos) throws IOException {
        long now = System.nanoTime();
        if (start == 0) {
            return now;
        }
        if (now - start > stallNanos) {
            throw new IOException("UDP round trip stalled for " + stallNanos / 1_000_000 + " ms");
        }
        return start;
    }
}
