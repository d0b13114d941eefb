package io.jhca.benchmarks;

import io.jhca.rxe.link.Link;
import io.jhca.rxe.link.RxBatch;
import io.jhca.rxe.link.UdpLink;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Arrays;

/**
 * roce_write_lat.c's socket mode in Java: would a bare Java implementation of RoCE RC, no engine, reach the C's ratio
 * to the plain UDP floor? Two threads, a client and a server, each a {@link BareRoce} side (the code
 * {@link RoceBareLoopBenchmark} times in memory) over its own jhca {@link UdpLink} on loopback (UDP_GRO, GSO pairs),
 * busy-polling, in perftest's run_iter_lat_write order as the C's: the client posts its WRITE, polls its CQ until the
 * WRITE's ACK (which comes with the server's WRITE), then waits for the byte; the server waits for the byte, posts its
 * WRITE, which carries its held ACK, and polls its completion (whose ACK comes with the client's next WRITE). ICRCs
 * are computed for the links' addresses and ports and the IPv4 IDs the kernel puts (0 alone, 0 and 1 for a GSO
 * pair's segments) and checked on receipt; a drop fails the run.
 *
 * <p>The floor is measured as the C's is, in the same pass, on the same two links and threads: a plain ping-pong of
 * SIZE-byte datagrams by {@link Link#send} and {@link Link#receive(RxBatch)} alone, so the ratio is against a Java
 * floor over the same syscall layer. Reported as perftest reports latency: t_typical (median) and t_avg of half round
 * trips, over ITERS iterations after WARMUP unmeasured ones, and the ratio. A whole first pass is run unreported, so
 * the JIT has compiled both loops before any pass is measured.
 *
 * <p>Usage: {@code RoceBareWireLat [ITERS [SIZE [WARMUP]]] [--repeat N]} (defaults 20000 2 20000, 1 pass);
 * {@code scripts/bench-bare-wire} builds and runs it. The client binds 127.0.0.72:4791, the server 127.0.0.71:4791.
 */
public final class RoceBareWireLat {
    private static final InetSocketAddress CLIENT = loopback(72);
    private static final InetSocketAddress SERVER = loopback(71);
    /** A receive slot: a page, past any datagram of the loop. */
    private static final int SLOT = 4096;

    private RoceBareWireLat() {
    }

    /** perftest's t_typical and t_avg of one loop, in ns. */
    record HalfRoundTrips(double median, double mean) {
        /** Half of each round trip between consecutive stamps (udp_sockets.h's half_round_trips). */
        static HalfRoundTrips of(long[] stamp) {
            int n = stamp.length - 1;
            double[] half = new double[n];
            double sum = 0;
            for (int i = 0; i < n; i++) {
                half[i] = (stamp[i + 1] - stamp[i]) / 2.0;
                sum += half[i];
            }
            Arrays.sort(half);
            return new HalfRoundTrips(half[n / 2], sum / n);
        }
    }

    public static void main(String[] args) throws InterruptedException {
        int repeat = 1;
        int[] value = {20000, 2, 20000};   // ITERS SIZE WARMUP
        int positional = 0;
        for (int a = 0; a < args.length; a++) {
            if (args[a].equals("--repeat") && a + 1 < args.length) {
                repeat = Integer.parseInt(args[++a]);
            } else if (positional < value.length) {
                value[positional++] = Integer.parseInt(args[a]);
            } else {
                positional = -1;
                break;
            }
        }
        int iters = value[0];
        int size = value[1];
        int warmup = value[2];
        if (positional < 0 || iters < 2 || size < 1 || size > BareRoce.MTU || warmup < 0 || repeat < 1) {
            System.err.println("usage: RoceBareWireLat [ITERS>=2 [1<=SIZE<=" + BareRoce.MTU + " [WARMUP]]]"
                    + " [--repeat N]");
            System.exit(2);
        }
        BareIcrc.selfCheck();
        // by their sockets, as the C loop receives (a loopback device's packet ring would hand over entries outside
        // the batch's slots, which LinkHandOver reads as offsets into slot 0)
        try (UdpLink cli = UdpLink.open(CLIENT, UdpLink.DEFAULT_SOCKET_BUFFER, true, false);
             UdpLink srv = UdpLink.open(SERVER, UdpLink.DEFAULT_SOCKET_BUFFER, true, false)) {
            System.out.printf("RDMA WRITE ping-pong, bare Java over jhca's UdpLink %s <-> %s, %d-byte messages,"
                    + " %d iterations after %d warm-up (half round trip), after one unreported pass:%n",
                    addressOf(CLIENT), addressOf(SERVER), size, iters, warmup);
            runPass(cli, srv, iters, size, warmup);   // the JIT's
            for (int r = 1; r <= repeat; r++) {
                HalfRoundTrips[] got = runPass(cli, srv, iters, size, warmup);
                HalfRoundTrips plain = got[0];
                HalfRoundTrips roce = got[1];
                String pass = repeat > 1 ? "pass " + r + ": " : "";
                System.out.printf("%splain UDP    t_typical %8.2f us   t_avg %8.2f us%n", pass, plain.median / 1000,
                        plain.mean / 1000);
                System.out.printf("%sbare RoCE    t_typical %8.2f us   t_avg %8.2f us%n", pass, roce.median / 1000,
                        roce.mean / 1000);
                System.out.printf("%sbare RoCE in Java / plain UDP: t_typical %.2fx   t_avg %.2fx%n", pass,
                        roce.median / plain.median, roce.mean / plain.mean);
            }
        }
    }

    /**
     * One pass, as the C's main: the plain ping-pong, then the RoCE one, both with the client in this thread and the
     * server in one thread of its own. Returns their half round trips.
     */
    private static HalfRoundTrips[] runPass(UdpLink cliLink, UdpLink srvLink, int iters, int size, int warmup)
            throws InterruptedException {
        int total = warmup + iters;
        BareRoce cli = new BareRoce(ipOf(cliLink), cliLink.localAddress().getPort(), 0x12, 0x11, 0x2201, size,
                new LinkHandOver(cliLink, srvLink.localAddress()));
        BareRoce srv = new BareRoce(ipOf(srvLink), srvLink.localAddress().getPort(), 0x11, 0x12, 0x1101, size,
                new LinkHandOver(srvLink, cliLink.localAddress()));
        BareRoce.connect(cli, srv);
        Thread server = new Thread(() -> {
            plainServe(srvLink, cliLink.localAddress(), size, total);
            for (long i = 0; i < total; i++) {   // serve()
                srv.awaitData(i);
                srv.writeNext(i);
                srv.awaitCompletion(i);
            }
        }, "server");
        server.setUncaughtExceptionHandler((t, e) -> {   // the client would wait for it forever
            e.printStackTrace();
            System.exit(1);
        });
        server.start();
        HalfRoundTrips plain = plainClient(cliLink, srvLink.localAddress(), size, iters, warmup);
        long[] stamp = new long[iters + 1];
        for (long i = 0; i < total; i++) {   // run_roce's loop
            if (i >= warmup) {
                stamp[(int) (i - warmup)] = System.nanoTime();
            }
            cli.writeNext(i);
            cli.awaitCompletion(i);
            cli.awaitData(i);
        }
        stamp[iters] = System.nanoTime();
        cli.flushAck();
        server.join();
        BareRoce.check(cli, srv);
        return new HalfRoundTrips[] {plain, HalfRoundTrips.of(stamp)};
    }

    /** run_plain's client: a SIZE-byte datagram out, wait for the answer; stamped as the RoCE loop is. */
    private static HalfRoundTrips plainClient(Link link, InetSocketAddress peer, int size, int iters, int warmup) {
        ByteBuffer out = ByteBuffer.allocateDirect(size);
        RxBatch in = new RxBatch(Link.MAX_BURST_SEGMENTS, SLOT);   // one datagram a call (see LinkHandOver)
        long[] stamp = new long[iters + 1];
        for (int i = 0; i < warmup + iters; i++) {
            if (i >= warmup) {
                stamp[i - warmup] = System.nanoTime();
            }
            send(link, out.position(0), peer);
            take(link, in);
        }
        stamp[iters] = System.nanoTime();
        return HalfRoundTrips.of(stamp);
    }

    /** plain_serve: each datagram's first SIZE bytes back from where they came in. */
    private static void plainServe(Link link, InetSocketAddress peer, int size, int total) {
        RxBatch in = new RxBatch(Link.MAX_BURST_SEGMENTS, SLOT);   // one datagram a call (see LinkHandOver)
        for (int i = 0; i < total; i++) {
            take(link, in);
            send(link, in.slot(0).limit(size), peer);
        }
    }

    /** plain_take: busy-polls until a datagram came. */
    private static void take(Link link, RxBatch in) {
        do {
            in.clear();
        } while (link.receive(in) == 0);
    }

    private static void send(Link link, ByteBuffer datagram, InetSocketAddress peer) {
        if (!link.send(datagram, peer, 0)) {
            throw new IllegalStateException("the link refused a datagram");
        }
    }

    private static InetSocketAddress loopback(int host) {
        try {
            return new InetSocketAddress(InetAddress.getByAddress(new byte[] {127, 0, 0, (byte) host}),
                    UdpLink.ROCE_V2_PORT);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);   // four bytes are an address
        }
    }

    private static int ipOf(Link link) {
        byte[] a = link.localAddress().getAddress().getAddress();
        return (a[0] & 0xff) << 24 | (a[1] & 0xff) << 16 | (a[2] & 0xff) << 8 | (a[3] & 0xff);
    }

    private static String addressOf(InetSocketAddress a) {
        return a.getAddress().getHostAddress() + ":" + a.getPort();
    }
}
