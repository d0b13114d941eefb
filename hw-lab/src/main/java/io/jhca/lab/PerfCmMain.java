package io.jhca.lab;

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
            return PerfRun.run(p, side, link, false, out);
        }
    }

    private static PerfOutcome client(PerfParams p, PrintWriter out) throws IOException {
        try (PerfSide side = new PerfSide(p, p.device())) {
            side.attachCm();
            InetSocketAddress srv = new InetSocketAddress(InetAddress.getByName(p.server()), p.tcpPort());
            InetAddress src = source(side);
            CmCommLink link = CmCommLink.connect(side.ctx, src, srv, p.stallMillis());
            side.cmLink = link;
            side.cm = new PerfCm(side, srv, src);
            return PerfRun.run(p, side, link, true, out);
        }
    }

    /** The side's own IPv4 address (its GID's), so rdma_cm picks this device; null lets it choose. */
    private static InetAddress source(PerfSide side) {
        InetAddress a = side.gid.toInetAddress();
        return a instanceof Inet4Address ? a : null;
    }

    private static PerfOutcome both(PerfParams p, PrintWriter out) throws IOException {
        String[] pair = Devices.pair(p.device(), p.peerDevice());
        PerfParams sp = p.as(PerfParams.Role.SERVER, pair[0]);
        PerfParams cp = p.as(PerfParams.Role.CLIENT, pair[1]);
        StringWriter serverText = new StringWriter();
        PrintWriter serverOut = new PrintWriter(serverText);
        AtomicReference<Throwable> serverFailure = new AtomicReference<>();
        PerfSide serverSide = new PerfSide(sp, pair[0]);
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
        try (PerfSide side = new PerfSide(cp, pair[1])) {
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
