package io.jhca.lab;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.concurrent.atomic.AtomicReference;

import io.jhca.rxe.link.SocketBuffers;
import io.jhca.rxe.link.UdpGso;

/**
 * The UDP stream floor of a bandwidth test: the same bytes as the RDMA run ({@code iters} messages of
 * {@code size} bytes) over two plain non-blocking DatagramChannels between the same two addresses, cut into
 * datagrams of one path MTU as the RoCE packets are, with the same socket buffers as an rxe device. UDP has no
 * flow control, so the receiver answers every message with its cumulative datagram count (one small datagram,
 * as RC answers a message with one ACK) and the sender keeps at most {@code txDepth} messages unanswered, as the
 * RDMA client keeps tx_depth WRs in flight (fewer if the receive buffer granted is smaller). Both ends busy-poll.
 * Whatever RoCE adds (headers, ICRC, the transport, completions, memory registration lookups) sits on top of this.
 */
public final class UdpStream {
    /** The socket buffers of an rxe device's UDP socket (rxe UdpLink.DEFAULT_SOCKET_BUFFER). */
    static final int SOCKET_BUFFER = 4 << 20;

    private UdpStream() {
    }

    /**
     * What one stream run measured; {@code jitMillis}: what the JIT compiled while it ran, which a fair floor keeps
     * near 0 as the RDMA run does.
     */
    public record Result(long size, long iters, double mibPerSec, double msgRate, long datagramsLost, long jitMillis) {
    }

    /**
     * Streams {@code iters} messages of {@code size} bytes in datagrams of up to {@code mtu} bytes.
     *
     * @throws IOException when an address cannot be bound here or the stream stalls for {@code stallMillis}
     */
    public static Result run(InetAddress serverAddr, InetAddress clientAddr, int size, long iters, int mtu, int txDepth,
                             long stallMillis) throws IOException {
        return run(serverAddr, clientAddr, size, iters, mtu, txDepth, stallMillis, SOCKET_BUFFER, 0);
    }

    /**
     * As {@link #run}, but sending no new message once {@code limitNanos} have passed (0: no limit): the floor of a
     * duration-mode run (-D) streams as long as the RDMA run did, not as many messages, which on a path slower than
     * the device's would take many times the duration. The result counts the messages answered by then.
     */
    public static Result runFor(InetAddress serverAddr, InetAddress clientAddr, int size, long iters, int mtu,
                                int txDepth, long stallMillis, long limitNanos) throws IOException {
        return run(serverAddr, clientAddr, size, iters, mtu, txDepth, stallMillis, SOCKET_BUFFER, limitNanos);
    }

    /** {@link #run} asking for {@code socketBuffer} bytes of socket buffer instead of an rxe device's. */
    static Result run(InetAddress serverAddr, InetAddress clientAddr, int size, long iters, int mtu, int txDepth,
                      long stallMillis, int socketBuffer) throws IOException {
        return run(serverAddr, clientAddr, size, iters, mtu, txDepth, stallMillis, socketBuffer, 0);
    }

    /**
     * As {@link #runFor}, but the sender hands the datagrams to the kernel in GSO sends of up to
     * {@link UdpGso#segmentsPerBurst} datagrams (UDP_SEGMENT) and the receiver takes each whole (UDP_GRO): the floor
     * of what a loopback rxe device does with a message's packets ({@code io.jhca.rxe.link.Link#sendBurst}). Throws
     * IOException if the kernel lacks either option.
     */
    public static Result runGso(InetAddress serverAddr, InetAddress clientAddr, int size, long iters, int mtu,
                                int txDepth, long stallMillis, long limitNanos) throws IOException {
        return run(serverAddr, clientAddr, size, iters, mtu, txDepth, stallMillis, SOCKET_BUFFER, limitNanos,
                UdpGso.segmentsPerBurst(datagramSize(size, mtu)));
    }

    private static Result run(InetAddress serverAddr, InetAddress clientAddr, int size, long iters, int mtu,
                              int txDepth, long stallMillis, int socketBuffer, long limitNanos) throws IOException {
        return run(serverAddr, clientAddr, size, iters, mtu, txDepth, stallMillis, socketBuffer, limitNanos, 1);
    }

    private static Result run(InetAddress serverAddr, InetAddress clientAddr, int size, long iters, int mtu,
                              int txDepth, long stallMillis, int socketBuffer, long limitNanos, int burst)
            throws IOException {
        if (size < 1 || mtu < 1 || iters < 1 || txDepth < 1 || limitNanos < 0) {
            throw new IllegalArgumentException("UDP stream: size, mtu, iters and tx depth must be positive, a time limit"
                    + " not negative");
        }
        int dgram = datagramSize(size, mtu);
        int perMsg = (size + dgram - 1) / dgram;
        long total = iters * perMsg;
        long stallNanos = Spin.stallNanos(stallMillis);
        long jit0 = JvmReport.jitTotalMillis();
        DatagramChannel srv = open(serverAddr, socketBuffer);
        try (DatagramChannel cli = open(clientAddr, socketBuffer)) {
            if (burst > 1 && (!UdpGso.segmentSends(cli, dgram) || !UdpGso.receiveWhole(srv))) {
                throw new IOException("this kernel has no UDP GSO (UDP_SEGMENT, Linux 4.18; UDP_GRO, 5.0)");
            }
            long window = window(srv.getOption(StandardSocketOptions.SO_RCVBUF), txDepth, perMsg, dgram);
            srv.connect(cli.getLocalAddress());
            cli.connect(srv.getLocalAddress());
            AtomicReference<Throwable> failure = new AtomicReference<>();
            long[] received = new long[1];
            Thread sink = FloorThread.start("hwlab-udp-sink", failure,
                    () -> sink(srv, dgram, total, perMsg, stallNanos, received, burst));
            long[] span;
            try {
                span = source(cli, dgram, total, perMsg, window, stallNanos, limitNanos, failure, burst);
            } finally {
                srv.close();
                FloorThread.join(sink);
            }
            Throwable f = failure.get();
            if (f != null && !(f instanceof java.nio.channels.ClosedChannelException)) {
                throw new IOException("UDP stream receiver failed: " + f.getMessage(), f);
            }
            return result(size, perMsg, span, received[0], JvmReport.jitTotalMillis() - jit0);
        } finally {
            srv.close();
        }
    }

    /** The size of a stream's datagrams: a message is cut into datagrams of one path MTU, as the RoCE packets are. */
    static int datagramSize(int size, int mtu) {
        return Math.min(size, Math.min(mtu, UdpBaseline.MAX_PAYLOAD));
    }

    /**
     * Messages the sender keeps unanswered: tx depth, but never more than half the receive buffer the receiver was
     * granted holds, so no datagram is lost to an overrun (a capped buffer narrows the window).
     */
    static long window(long granted, int txDepth, int perMsg, int dgram) {
        return Math.max(1, Math.min((long) txDepth, granted / 2 / ((long) perMsg * (dgram + 64))));
    }

    /**
     * The receiving end, on {@code srv} connected to the sender: takes up to {@code total} datagrams of up to
     * {@code dgram} bytes and answers every message's last with the count so far; {@code received[0]} holds the count,
     * also when closing {@code srv} ended the wait (how the sender ends a stream cut short by a time limit).
     */
    static void sink(DatagramChannel srv, int dgram, long total, int perMsg, long stallNanos, long[] received)
            throws IOException {
        sink(srv, dgram, total, perMsg, stallNanos, received, 1);
    }

    /** {@link #sink} taking datagrams of up to {@code burst} segments of {@code dgram} bytes whole (UDP_GRO). */
    static void sink(DatagramChannel srv, int dgram, long total, int perMsg, long stallNanos, long[] received,
                     int burst) throws IOException {
        long n = 0;
        try {
            ByteBuffer b = UdpBaseline.pageAligned(dgram * burst);
            ByteBuffer ack = ByteBuffer.allocateDirect(8);
            long spins = 0;
            long lastRx = System.nanoTime();
            while (n < total) {
                b.clear();
                int got = srv.read(b);
                if (got <= 0) {
                    Spin.idle(++spins);
                    if ((spins & 1023) == 0 && System.nanoTime() - lastRx > stallNanos) {
                        throw new IOException("UDP stream: nothing received for " + stallNanos / 1_000_000 + " ms");
                    }
                    continue;
                }
                spins = 0;
                lastRx = System.nanoTime();
                long before = n;
                n += (got + dgram - 1) / dgram;   // a burst's segments, all of dgram bytes
                if (n / perMsg > before / perMsg) {
                    ack.clear();
                    ack.putLong(0, n);
                    srv.write(ack);
                }
            }
        } finally {
            received[0] = n;
        }
    }

    /**
     * The sending end, on {@code cli} connected to the receiver: {@code total} datagrams, at most {@code window}
     * messages unanswered, no new message once {@code limitNanos} (if not 0) have passed. Returns {start, time of the
     * last answer, datagrams sent and answered}. Stops when {@code failure} is set (the receiver's).
     */
    static long[] source(DatagramChannel cli, int dgram, long total, int perMsg, long window, long stallNanos,
                         long limitNanos, AtomicReference<Throwable> failure) throws IOException {
        return source(cli, dgram, total, perMsg, window, stallNanos, limitNanos, failure, 1);
    }

    /**
     * {@link #source} handing the datagrams to the kernel {@code burst} at a time, in one write each, across messages
     * as a device's bursts go (a message may then start up to {@code burst - 1} datagrams before the window opens): on
     * a socket with UDP_SEGMENT set, one GSO datagram.
     */
    static long[] source(DatagramChannel cli, int dgram, long total, int perMsg, long window, long stallNanos,
                         long limitNanos, AtomicReference<Throwable> failure, int burst) throws IOException {
        ByteBuffer b = UdpBaseline.pageAligned(dgram * burst);
        ByteBuffer ack = ByteBuffer.allocateDirect(8);
        long sent = 0;
        long acked = 0;
        long spins = 0;
        long start = System.nanoTime();
        long lastAck = start;
        long end = total;   // datagrams to send and have answered: all of them, or fewer once the time is up
        while (acked < end) {
            if (limitNanos > 0 && end == total && System.nanoTime() - start >= limitNanos) {
                // finish the message being sent, start no new one (but measure at least one)
                end = Math.max(perMsg, (sent + perMsg - 1) / perMsg * perMsg);
            }
            while (sent < end && (sent - acked) / perMsg < window) {
                int k = (int) Math.min(burst, end - sent);   // across messages, as the device's bursts go
                b.clear().limit(dgram * k);
                if (cli.write(b) <= 0) {
                    break; // send buffer full: read answers first
                }
                sent += k;
            }
            ack.clear();
            if (cli.read(ack) > 0) {
                acked = Math.max(acked, ack.getLong(0));
                lastAck = System.nanoTime();
                spins = 0;
                continue;
            }
            Spin.idle(++spins);
            if ((spins & 1023) == 0 && System.nanoTime() - lastAck > stallNanos) {
                throw new IOException("UDP stream stalled for " + stallNanos / 1_000_000 + " ms (a datagram lost: "
                        + acked + " of " + end + " answered)");
            }
            if (failure.get() != null) {
                break;
            }
        }
        return new long[] {start, lastAck, end};
    }

    /** What a stream measured: {@code span} from {@link #source}, {@code received} datagrams counted by the sink. */
    static Result result(int size, int perMsg, long[] span, long received, long jitMillis) {
        double seconds = (span[1] - span[0]) / 1e9;
        long messages = span[2] / perMsg;
        double bytes = (double) messages * size;
        return new Result(size, messages, bytes / seconds / (1 << 20), messages / seconds / 1e6,
                Math.max(0, span[2] - received), jitMillis);
    }

    /** A non-blocking DatagramChannel with an rxe device's socket buffers ({@code socketBuffer}), bound to {@code addr}. */
    static DatagramChannel open(InetAddress addr, int socketBuffer) throws IOException {
        DatagramChannel ch = DatagramChannel.open();
        try {
            SocketBuffers.apply(ch, socketBuffer); // as an rxe device's socket gets them
            ch.bind(new InetSocketAddress(addr, 0));
        } catch (IOException e) {
            ch.close();
            throw UdpBaseline.cannotBind(addr, e);
        }
        ch.configureBlocking(false);
        return ch;
    }
}
