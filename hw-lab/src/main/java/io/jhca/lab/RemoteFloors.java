package io.jhca.lab;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicReference;

import io.jhca.rxe.link.UdpLink;

/**
 * The UDP floors of two hwlab processes, one end in each: the client measures, the server answers, each over a socket
 * bound to its own GID's address, so a floor runs between the same two addresses as the RDMA run, on one host or on
 * two, where a client alone could bind only its own. Both sides offer it in the version exchange
 * ({@link PeerOffer#floors}); the TCP connection then stays open after the test's last exchange.
 *
 * <p>Per floor, on that connection: the client's request ({@value #REQUEST} bytes: kind, size, counts, timings, its
 * UDP port, the stream window), the server's reply (status, its UDP port, the receive buffer its socket was granted,
 * an error text), both ends run, the client's done (its status), the server's result (status, datagrams received, the
 * stream's time and count when the server sends it, an error text). A request of kind {@link #END} ends the floors.
 * The server's end runs in a thread while its main thread waits on the connection, so a client that stops ends it.
 * A stream from the server (RDMA READ's direction) starts when the client says go (its socket is connected by then:
 * a DatagramChannel's connect drops what came before it) and has no done: the server's result comes when its end has
 * sent all.
 */
final class RemoteFloors {
    static final int END = 0;
    private static final int PLAIN = 1;
    private static final int ACKS = 2;
    private static final int BATCHED = 3;
    /** A stream from the client to the server (WRITE and SEND), and from the server to the client (READ). */
    private static final int STREAM_TO_SERVER = 4;
    private static final int STREAM_FROM_SERVER = 5;
    /** kind, size, iters, warmup, rttFactor, gapNanos, stallNanos, client port, mtu, txDepth, limitNanos, window. */
    static final int REQUEST = 4 + 4 + 8 + 4 + 4 + 8 + 8 + 4 + 4 + 4 + 8 + 8;
    /** status, port, granted receive buffer, text length. */
    private static final int REPLY = 4 + 4 + 8 + 4;
    /** status, pad. */
    private static final int DONE = 8;
    /** A stream from the server starts when the client says so (its socket connected): zeros. */
    private static final int GO = 8;
    /** status, received, nanos, datagrams, text length. */
    private static final int RESULT = 4 + 8 + 8 + 8 + 4;
    private static final int OK = 0;
    private static final int FAILED = 1;
    private static final int MAX_TEXT = 4096;

    private final PerftestWire link;
    private final InetAddress local;
    private final InetAddress peer;

    /** The client's end: floors from {@code local} to the server at {@code peer}, over {@code link}. */
    RemoteFloors(PerftestWire link, InetAddress local, InetAddress peer) {
        this.link = link;
        this.local = local;
        this.peer = peer;
    }

    /**
     * One latency floor measured with the server's end answering: {@code warmup} unmeasured and {@code iters} measured
     * round trips of {@code size} bytes, as {@link UdpBaseline#run} does in one process.
     */
    LatencyStats latency(UdpFloor floor, int size, int iters, int warmup, int rttFactor, long stallNanos,
                         long gapNanos) throws IOException {
        int kind = floor == UdpFloor.PLAIN ? PLAIN : floor == UdpFloor.ACKS ? ACKS : BATCHED;
        long[] tposted;
        if (kind == BATCHED) {
            try (UdpLink cli = BatchedAckFloor.open(local)) {
                Reply r = request(new Request(kind, size, iters, warmup, rttFactor, gapNanos, stallNanos,
                        cli.localAddress().getPort(), 0, 0, 0, 0));
                AtomicReference<Throwable> none = new AtomicReference<>();
                InetSocketAddress server = new InetSocketAddress(peer, r.port());
                tposted = runThenDone(stallNanos, () -> BatchedAckFloor.client(cli, server, size, iters, warmup,
                        gapNanos, stallNanos, none)).value();
            }
        } else {
            try (DatagramChannel cli = UdpBaseline.open(local)) {
                Reply r = request(new Request(kind, size, iters, warmup, rttFactor, gapNanos, stallNanos, port(cli),
                        0, 0, 0, 0));
                cli.connect(new InetSocketAddress(peer, r.port()));
                tposted = runThenDone(stallNanos, () -> UdpBaseline.client(cli, size, iters, warmup, kind == ACKS,
                        gapNanos, stallNanos)).value();
            }
        }
        return UdpBaseline.stats(size, tposted, rttFactor);
    }

    /**
     * One stream floor with the server's end at the other side: {@code iters} messages of {@code size} bytes from this
     * side to the server ({@code toServer}) or back, as {@link UdpStream#runFor} does in one process.
     */
    UdpStream.Result stream(boolean toServer, int size, long iters, int mtu, int txDepth, long stallNanos,
                            long limitNanos) throws IOException {
        int dgram = UdpStream.datagramSize(size, mtu);
        int perMsg = (size + dgram - 1) / dgram;
        long total = iters * perMsg;
        long jit0 = JvmReport.jitTotalMillis();
        try (DatagramChannel ch = UdpStream.open(local, UdpStream.SOCKET_BUFFER)) {
            if (toServer) {
                Reply r = request(new Request(STREAM_TO_SERVER, size, iters, 0, 0, 0, stallNanos, port(ch), mtu,
                        txDepth, limitNanos, 0));
                ch.connect(new InetSocketAddress(peer, r.port()));
                long window = UdpStream.window(r.granted(), txDepth, perMsg, dgram);
                Done<long[]> sent = runThenDone(stallNanos, () -> UdpStream.source(ch, dgram, total, perMsg, window,
                        stallNanos, limitNanos, new AtomicReference<>()));
                return UdpStream.result(size, perMsg, sent.value(), sent.server().received,
                        JvmReport.jitTotalMillis() - jit0);
            }
            long window = UdpStream.window(ch.getOption(StandardSocketOptions.SO_RCVBUF), txDepth, perMsg, dgram);
            Reply r = request(new Request(STREAM_FROM_SERVER, size, iters, 0, 0, 0, stallNanos, port(ch), mtu,
                    txDepth, limitNanos, window));
            ch.connect(new InetSocketAddress(peer, r.port()));
            // connected first: a DatagramChannel's connect drops what came before it (the JDK flushes the socket)
            link.write(new byte[GO]);
            long[] received = new long[1];
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread sink = FloorThread.start("hwlab-udp-sink", failure,
                    () -> UdpStream.sink(ch, dgram, total, perMsg, stallNanos, received));
            Result res;
            try {
                res = result(stallNanos, sink);   // the server's end sent all it had to, or stopped
            } finally {
                ch.close();   // ends the sink if the stream was cut short (a time limit)
                FloorThread.join(sink);
            }
            Throwable f = failure.get();
            boolean sinkFailed = f != null && !(f instanceof ClosedChannelException);
            if (res.status != OK) {
                throw new IOException("the server's end of the UDP stream failed: " + res.text
                        + (sinkFailed ? " (this end: " + HwLab.describe(f) + ")" : ""));
            }
            if (sinkFailed) {
                throw new IOException("UDP stream receiver failed: " + f.getMessage(), f);
            }
            long[] span = {0, res.nanos, res.datagrams};
            return UdpStream.result(size, perMsg, span, received[0], JvmReport.jitTotalMillis() - jit0);
        }
    }

    /** Tells the server at the other end of {@code link} that no floor follows. */
    static void end(PerftestWire link) throws IOException {
        link.write(new Request(END, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0).bytes());
    }

    /** An end of a floor that runs in the caller's thread. */
    private interface End<T> {
        T run() throws IOException;
    }

    /** The server's reply to a request: the port of its end, the receive buffer its socket was granted. */
    private record Reply(int port, long granted) {
    }

    /** The server's result once a floor ran: its status, what its end received, a stream's time and datagrams. */
    private record Result(int status, long received, long nanos, long datagrams, String text) {
    }

    /** What this side's end returned, and the server's result. */
    private record Done<T>(T value, Result server) {
    }

    /** A port a peer's datagrams can come from or go to: 1..65535 (0 is no port, and more does not fit). */
    static boolean isUdpPort(int port) {
        return port >= 1 && port <= 65535;
    }

    /**
     * Sends a floor request and reads the server's reply; like every read of the client's floors, fails after the
     * request's stall timeout without a word from the server while no end of the floor runs here.
     */
    private Reply request(Request q) throws IOException {
        link.write(q.bytes());
        ByteBuffer a = ByteBuffer.wrap(waitFor(link, REPLY, q.stallNanos, null));
        int status = a.getInt();
        Reply r = new Reply(a.getInt(), a.getLong());
        String text = text(a.getInt(), q.stallNanos);
        if (status != OK) {
            throw new IOException("the server's end of the floor: " + text);
        }
        if (!isUdpPort(r.port())) {
            // an InetSocketAddress would throw an IllegalArgumentException, which no floor's caller catches
            throw new IOException("the server's end of the floor is at port " + r.port() + " (no UDP port)");
        }
        return r;
    }

    /**
     * Runs this side's end, then tells the server (done) and takes its result: this side's failure first, else the
     * server's.
     */
    private <T> Done<T> runThenDone(long stallNanos, End<T> end) throws IOException {
        T value = null;
        IOException mine = null;
        try {
            value = end.run();
        } catch (IOException e) {
            mine = e;
        }
        link.write(ByteBuffer.allocate(DONE).putInt(mine == null ? OK : FAILED).array());
        Result res = result(stallNanos, null);
        if (mine != null) {
            throw mine;
        }
        if (res.status != OK) {
            throw new IOException("the server's end of the floor failed: " + res.text);
        }
        return new Done<>(value, res);
    }

    /** The server's result of a floor; {@code end}: this side's end while it still runs (null: none). */
    private Result result(long stallNanos, Thread end) throws IOException {
        ByteBuffer r = ByteBuffer.wrap(waitFor(link, RESULT, stallNanos, end));
        int status = r.getInt();
        long received = r.getLong();
        long nanos = r.getLong();
        long datagrams = r.getLong();
        return new Result(status, received, nanos, datagrams, text(r.getInt(), stallNanos));
    }

    private String text(int length, long stallNanos) throws IOException {
        if (length < 0 || length > MAX_TEXT) {
            throw new IOException("the peer's floor message has a text of " + length + " bytes");
        }
        return length == 0 ? "" : new String(waitFor(link, length, stallNanos, null), StandardCharsets.UTF_8);
    }

    private static int port(DatagramChannel ch) throws IOException {
        return ((InetSocketAddress) ch.getLocalAddress()).getPort();
    }

    /** A floor request, as the client writes it ({@value #REQUEST} bytes, big-endian, in this order). */
    private record Request(int kind, int size, long iters, int warmup, int rttFactor, long gapNanos, long stallNanos,
                           int port, int mtu, int txDepth, long limitNanos, long window) {

        static Request read(byte[] b) {
            ByteBuffer q = ByteBuffer.wrap(b);
            return new Request(q.getInt(), q.getInt(), q.getLong(), q.getInt(), q.getInt(), q.getLong(), q.getLong(),
                    q.getInt(), q.getInt(), q.getInt(), q.getLong(), q.getLong());
        }

        byte[] bytes() {
            return ByteBuffer.allocate(REQUEST).putInt(kind).putInt(size).putLong(iters).putInt(warmup)
                    .putInt(rttFactor).putLong(gapNanos).putLong(stallNanos).putInt(port).putInt(mtu).putInt(txDepth)
                    .putLong(limitNanos).putLong(window).array();
        }

        /** A latency floor's round trips, warm-up and measured. */
        int total() {
            return (int) (warmup + iters);
        }

        /** Whether every field is one this side runs: a known kind, sizes, counts and the client's port in range. */
        boolean valid() {
            boolean latency = kind >= PLAIN && kind <= BATCHED;
            boolean stream = kind == STREAM_TO_SERVER || kind == STREAM_FROM_SERVER;
            if (!(latency || stream) || size < 0 || iters < 1 || stallNanos < 1 || !isUdpPort(port)) {
                return false;
            }
            if (latency) {
                return size <= UdpBaseline.MAX_PAYLOAD && warmup >= 0 && warmup + iters <= Integer.MAX_VALUE
                        && rttFactor >= 1 && rttFactor <= 2 && gapNanos >= 0;
            }
            return size >= 1 && mtu >= 1 && txDepth >= 1 && window >= 0 && limitNanos >= 0
                    && iters <= Long.MAX_VALUE / size;
        }
    }

    // ---- the server's end ----

    /**
     * Answers the client's floor requests until it ends them: each floor's end on a socket bound to {@code local},
     * talking to the client's at {@code peer}. Returns how many floors ran (their sockets bound). A floor that fails
     * here is reported to the client, which prints it; only a broken connection is thrown, or a client that sends
     * nothing for {@code quietNanos} while no end of a floor runs here ({@link Long#MAX_VALUE}: wait for ever).
     */
    static int serve(PerftestWire link, InetAddress local, InetAddress peer, long quietNanos) throws IOException {
        int served = 0;
        while (true) {
            Request q = Request.read(waitFor(link, REQUEST, quietNanos, null));
            if (q.kind == END) {
                return served;
            }
            if (!q.valid()) {
                reply(link, FAILED, 0, 0, "a floor request this side does not understand (kind " + q.kind + ")");
                return served;   // the two sides no longer agree on the protocol: stop here
            }
            InetSocketAddress client = new InetSocketAddress(peer, q.port);
            boolean ran;
            switch (q.kind) {
                case BATCHED:
                    ran = batched(link, local, client, q, quietNanos);
                    break;
                case STREAM_TO_SERVER:
                case STREAM_FROM_SERVER:
                    ran = stream(link, local, client, q, quietNanos);
                    break;
                default:
                    ran = echo(link, local, client, q, quietNanos);
            }
            served += ran ? 1 : 0;
        }
    }

    private static boolean echo(PerftestWire link, InetAddress local, InetSocketAddress client, Request q,
            long quietNanos) throws IOException {
        DatagramChannel srv;
        try {
            srv = UdpBaseline.open(local);
            srv.connect(client);
        } catch (IOException e) {
            reply(link, FAILED, 0, 0, e.getMessage());
            return false;
        }
        try (srv) {
            reply(link, OK, port(srv), 0, "");
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread t = FloorThread.start("hwlab-udp-echo", failure, () -> UdpBaseline.echo(srv, q.size, q.total(),
                    q.kind == ACKS, q.rttFactor, q.warmup, q.gapNanos, q.stallNanos));
            waitFor(link, DONE, quietNanos, t);
            srv.close();   // ends the echo if it still waits (the client stopped early)
            FloorThread.join(t);
            result(link, failure.get(), 0, 0, 0);
        }
        return true;
    }

    private static boolean batched(PerftestWire link, InetAddress local, InetSocketAddress client, Request q,
            long quietNanos) throws IOException {
        UdpLink srv;
        try {
            srv = BatchedAckFloor.open(local);
        } catch (IOException e) {
            reply(link, FAILED, 0, 0, e.getMessage());
            return false;
        }
        try (srv) {
            reply(link, OK, srv.localAddress().getPort(), 0, "");
            AtomicReference<Throwable> failure = new AtomicReference<>();
            Thread t = FloorThread.start("hwlab-udp-batched-echo", failure, () -> BatchedAckFloor.echo(srv, client,
                    q.size, q.total(), q.rttFactor, q.warmup, q.gapNanos, q.stallNanos, failure));
            waitFor(link, DONE, quietNanos, t);
            failure.compareAndSet(null, BatchedAckFloor.DONE);   // ends the echo if it still waits
            FloorThread.join(t);
            Throwable f = failure.get();
            result(link, f == BatchedAckFloor.DONE ? null : f, 0, 0, 0);
        }
        return true;
    }

    private static boolean stream(PerftestWire link, InetAddress local, InetSocketAddress client, Request q,
            long quietNanos) throws IOException {
        int dgram = UdpStream.datagramSize(q.size, q.mtu);
        int perMsg = (q.size + dgram - 1) / dgram;
        long total = q.iters * perMsg;
        long stallNanos = q.stallNanos;
        DatagramChannel srv;
        long granted;
        try {
            srv = UdpStream.open(local, UdpStream.SOCKET_BUFFER);
            srv.connect(client);
            granted = srv.getOption(StandardSocketOptions.SO_RCVBUF);
        } catch (IOException e) {
            reply(link, FAILED, 0, 0, e.getMessage());
            return false;
        }
        try (srv) {
            reply(link, OK, port(srv), granted, "");
            if (q.kind == STREAM_TO_SERVER) {
                AtomicReference<Throwable> failure = new AtomicReference<>();
                long[] received = new long[1];
                Thread t = FloorThread.start("hwlab-udp-sink", failure,
                        () -> UdpStream.sink(srv, dgram, total, perMsg, stallNanos, received));
                waitFor(link, DONE, quietNanos, t);
                srv.close();   // the client's end has all its answers: what did not come is lost
                FloorThread.join(t);
                result(link, failure.get(), received[0], 0, 0);
            } else {
                waitFor(link, GO, quietNanos, null);   // the client's socket is connected: what is sent now reaches it
                // the source in this thread: nothing waits on the connection while it sends, the client waits for its
                // result; what it throws is its failure, as an end's in a FloorThread
                long[] s = null;
                Throwable failure = null;
                try {
                    s = UdpStream.source(srv, dgram, total, perMsg, Math.max(1, q.window), stallNanos, q.limitNanos,
                            new AtomicReference<>());
                } catch (Throwable e) {
                    failure = e;
                }
                result(link, failure, 0, s == null ? 0 : s[1] - s[0], s == null ? 0 : s[2]);
            }
        }
        return true;
    }

    /**
     * Reads a message, sleeping in the kernel where the link can (the floor's two ends have the cores meanwhile); fails
     * after {@code quietNanos} without a word from the other side while {@code end} (this side's end of the floor;
     * null: none) does not run.
     */
    private static byte[] waitFor(PerftestWire link, int n, long quietNanos, Thread end) throws IOException {
        return link instanceof OobLink o ? o.readBlocking(n, quietNanos, end) : link.read(n);
    }

    private static void reply(PerftestWire link, int status, int port, long granted, String text) throws IOException {
        byte[] t = bytes(text);
        link.write(ByteBuffer.allocate(REPLY + t.length).putInt(status).putInt(port).putLong(granted).putInt(t.length)
                .put(t).array());
    }

    /** The server's result: failed if {@code failure} is one (a closed socket is how this side ended its end). */
    private static void result(PerftestWire link, Throwable failure, long received, long nanos, long datagrams)
            throws IOException {
        boolean failed = failure != null && !(failure instanceof ClosedChannelException);
        byte[] t = bytes(failed ? HwLab.describe(failure) : "");
        link.write(ByteBuffer.allocate(RESULT + t.length).putInt(failed ? FAILED : OK).putLong(received).putLong(nanos)
                .putLong(datagrams).putInt(t.length).put(t).array());
    }

    private static byte[] bytes(String text) {
        byte[] b = (text == null ? "" : text).getBytes(StandardCharsets.UTF_8);
        return b.length <= MAX_TEXT ? b : java.util.Arrays.copyOf(b, MAX_TEXT);
    }
}
