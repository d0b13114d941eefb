package io.jhca.lab;

import io.jhca.verbs.Context;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The three shapes of a perf run with -R: every exchange and every test QP goes through rdma_cm on the -p port
 * (default 18515), the server listening on every address of its device as perftest's rdma_server_connect does
 * (INADDR_ANY), the client resolving the server's address. In-process both sides are in this JVM, on two devices.
 */
final class PerfCmMain {
    /** In-process runs without -p pick a port here, so parallel runs rarely meet. */
    static final int IN_PROCESS_PORT_BASE = 20000;
    static final int IN_PROCESS_PORT_SPAN = 20000;

    private PerfCmMain() {
    }

    static PerfOutcome run(PerfParams p, PrintWriter out) throws IOException {
        switch (p.role()) {
            case SERVER: return server(p, out);
            case CLIENT: return client(p, out);
            default: return both(p, out);
        }
    }

    private static PerfOutcome server(PerfParams p, PrintWriter out) throws IOException {
        try (PerfSide side = new PerfSide(p, p.device())) {
            PrivateWarmup.Result warm = warmUpFirst(p, side, "listening", out);
            side.attachCm();
            InetAddress bind = p.bind() != null ? InetAddress.getByName(p.bind()) : InetAddress.getByName("0.0.0.0");
            InetSocketAddress at = new InetSocketAddress(bind, p.tcpPort());
            CmCommLink link = CmCommLink.listen(side.ctx, at, p.stallMillis());
            side.cmLink = link;
            side.cm = new PerfCm(side, at, null);
            out.println();
            out.println("************************************");
            out.println("* Waiting for client to connect... *");
            out.println("************************************");
            out.printf(" (rdma_cm listening on %s:%d)%n", bind.getHostAddress(), p.tcpPort());
            out.flush();
            link.accept(0);
            return PerfRun.run(p, side, link, false, out, warm);
        }
    }

    private static PerfOutcome client(PerfParams p, PrintWriter out) throws IOException {
        try (PerfSide side = new PerfSide(p, p.device())) {
            PrivateWarmup.Result warm = warmUpFirst(p, side, "connecting", out);
            side.attachCm();
            InetSocketAddress srv = new InetSocketAddress(InetAddress.getByName(p.server()), p.tcpPort());
            InetAddress src = source(side);
            CmCommLink link = CmCommLink.connect(side.ctx, src, srv, p.stallMillis());
            side.cmLink = link;
            side.cm = new PerfCm(side, srv, src);
            return PerfRun.run(p, side, link, true, out, warm);
        }
    }

    /**
     * The private warm-up ({@link PrivateWarmup}) of a side that may face C perftest, run before its rdma_cm
     * exchange connection exists; null if the side gets none. Over rdma_cm, C perftest waits for each exchange message
     * by polling its CQ (perftest_communication.c {@code rdma_read_data} spins on {@code ibv_poll_cq}), so a warm-up
     * after the connection, while it waits, takes a CPU from the machine for its whole length; before the connection
     * it waits in {@code rdma_get_cm_event}, asleep. Where that CPU was the one the warm-up needed (peer and tool on
     * one host, a guest's vCPU), each of its runs took 2-8 times as long. The TCP exchange's peer sleeps in
     * {@code read} and keeps the warm-up where it was, after the versions say the peer is not hwlab.
     */
    private static PrivateWarmup.Result warmUpFirst(PerfParams p, PerfSide side, String before, PrintWriter out) {
        io.jhca.rxe.RxeContext twinned = PrivateWarmup.twinnable(p, side.ctx);
        if (twinned == null) {
            return null;
        }
        out.printf(" Warming up before %s: %d short runs between rxe devices of this process%n", before,
                PrivateWarmup.RUNS);
        out.flush();
        return PrivateWarmup.run(p, twinned);
    }

    /** The side's own IPv4 address (its GID's), so rdma_cm picks this device; null lets it choose. */
    private static InetAddress source(PerfSide side) {
        InetAddress a = side.gid.toInetAddress();
        return a instanceof Inet4Address ? a : null;
    }

    private static PerfOutcome both(PerfParams p, PrintWriter out) throws IOException {
        return both(p, out, null, null);
    }

    /**
     * Both roles in this process: on {@code serverCtx} and {@code clientCtx}, open already and closed here, if given
     * ({@link PrivateWarmup}); else on the devices {@link Devices#pair} names.
     */
    static PerfOutcome both(PerfParams p, PrintWriter out, Context serverCtx, Context clientCtx) throws IOException {
        String[] pair = serverCtx != null ? new String[] {serverCtx.name(), clientCtx.name()}
                : Devices.pair(p.device(), p.peerDevice());
        PerfParams sp = p.as(PerfParams.Role.SERVER, pair[0]);
        PerfParams cp = p.as(PerfParams.Role.CLIENT, pair[1]);
        StringWriter serverText = new StringWriter();
        PrintWriter serverOut = new PrintWriter(serverText);
        AtomicReference<Throwable> serverFailure = new AtomicReference<>();
        PerfSide serverSide = PerfMain.serverSide(sp, pair[0], serverCtx, clientCtx);
        InetSocketAddress at;
        CmCommLink serverLink;
        try {
            serverSide.attachCm();
            InetAddress ip = source(serverSide);
            if (ip == null) {
                throw new IOException(pair[0] + " has no IPv4 GID for rdma_cm to listen on");
            }
            int port = p.tcpPort() != 0 ? p.tcpPort()
                    : IN_PROCESS_PORT_BASE + ThreadLocalRandom.current().nextInt(IN_PROCESS_PORT_SPAN);
            at = new InetSocketAddress(ip, port);
            serverLink = CmCommLink.listen(serverSide.ctx, at, p.stallMillis());
            serverSide.cmLink = serverLink;
            serverSide.cm = new PerfCm(serverSide, at, null);
        } catch (IOException | RuntimeException e) {
            serverSide.close();
            if (clientCtx != null) {
                clientCtx.close();
            }
            throw e;
        }
        out.printf(" hwlab perf %s -R: in-process run, server %s, client %s, rdma_cm on %s:%d; the client's report:%n",
                p.test().command(), pair[0], pair[1], at.getAddress().getHostAddress(), at.getPort());
        out.flush();
        Thread server = new Thread(() -> {
            try (PerfSide side = serverSide) {
                serverLink.accept(PerfMain.LOCAL_TIMEOUT_MILLIS);
                PerfRun.run(sp, side, serverLink, false, serverOut);
            } catch (Throwable t) {
                serverFailure.set(t);
            }
        }, "hwlab-perf-server");
        server.setDaemon(true);
        server.start();
        PerfOutcome o;
        try (PerfSide side = clientCtx != null ? new PerfSide(cp, clientCtx) : new PerfSide(cp, pair[1])) {
            side.attachCm();
            InetAddress src = source(side);
            CmCommLink link = CmCommLink.connect(side.ctx, src, at, p.stallMillis());
            side.cmLink = link;
            side.cm = new PerfCm(side, at, src);
            o = PerfRun.run(cp, side, link, true, out);
        } catch (IOException | RuntimeException e) {
            throw PerfMain.clientFailed(e, server, serverFailure);
        }
        return PerfMain.serverDone(o, server, serverFailure, serverText, pair);
    }
}
