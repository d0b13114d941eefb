package io.jhca.lab;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.concurrent.atomic.AtomicReference;

import io.jhca.verbs.Context;

/**
 * Runs a perf test in one of its three shapes: as the server of a two-process run, as its client, or with both
 * roles in this process (server on one device in a thread, client on the other in the caller's thread),
 * talking over the same TCP exchange on loopback, so a fresh machine needs nothing but this JVM.
 */
public final class PerfMain {
    /** How long the in-process server waits for its client, and the client for the server's thread to end. */
    static final int LOCAL_TIMEOUT_MILLIS = 60_000;

    private PerfMain() {
    }

    public static PerfOutcome run(PerfParams p, PrintWriter out) throws IOException {
        PerfOutcome o;
        if (p.rdmaCm()) {
            o = PerfCmMain.run(p, out);
        } else {
            switch (p.role()) {
                case SERVER: o = server(p, out); break;
                case CLIENT: o = client(p, out); break;
                default: o = both(p, out);
            }
        }
        if (p.json() != null) {
            PerfJson.write(o, p.json());
            out.println(" JSON written to " + p.json());
        }
        if (p.plot() != null) {
            PerfPlot.write(o, p.plot());
            out.println(" Plot written to " + p.plot());
        }
        out.flush();
        return o;
    }

    private static PerfOutcome server(PerfParams p, PrintWriter out) throws IOException {
        try (PerfSide side = new PerfSide(p, p.device())) {
            InetAddress bind = GidChoice.serverListenAddress(p.bind());
            ServerSocket ss = OobLink.listen(bind, p.tcpPort());
            out.println();
            out.println("************************************");
            out.println("* Waiting for client to connect... *");
            out.println("************************************");
            out.printf(" (listening on %s)%n", OobLink.describe(ss));
            out.flush();
            try (OobLink link = OobLink.accept(ss, 0)) {
                link.whileWaiting(side.ctx);
                return PerfRun.run(p, side, link, false, out);
            }
        }
    }

    private static PerfOutcome client(PerfParams p, PrintWriter out) throws IOException {
        try (PerfSide side = new PerfSide(p, p.device());
             OobLink link = OobLink.connect(p.server(), p.tcpPort(), 30_000)) {
            link.whileWaiting(side.ctx);
            return PerfRun.run(p, side, link, true, out);
        }
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
        PerfSide serverSide = serverSide(sp, pair[0], serverCtx, clientCtx);
        ServerSocket ss;
        InetAddress bind;
        try {
            bind = GidChoice.inProcessListenAddress(serverSide.gid, p.bind());
            ss = OobLink.listen(bind, p.tcpPort());
        } catch (IOException | RuntimeException e) {
            serverSide.close();
            if (clientCtx != null) {
                clientCtx.close();
            }
            throw e;
        }
        out.printf(" hwlab perf %s: in-process run, server %s, client %s, TCP exchange on %s:%d; the client's report:%n",
                p.test().command(), pair[0], pair[1], bind.getHostAddress(), ss.getLocalPort());
        out.flush();
        Thread server = new Thread(() -> {
            try (PerfSide side = serverSide; OobLink link = OobLink.accept(ss, LOCAL_TIMEOUT_MILLIS)) {
                link.whileWaiting(side.ctx);
                PerfRun.run(sp, side, link, false, serverOut);
            } catch (Throwable t) {
                serverFailure.set(t);
            }
        }, "hwlab-perf-server");
        server.setDaemon(true);
        server.start();
        PerfOutcome o;
        try (PerfSide side = clientCtx != null ? new PerfSide(cp, clientCtx) : new PerfSide(cp, pair[1]);
             OobLink link = OobLink.connect(bind.getHostAddress(), ss.getLocalPort(), 30_000)) {
            link.whileWaiting(side.ctx);
            o = PerfRun.run(cp, side, link, true, out);
        } catch (IOException | RuntimeException e) {
            ss.close(); // unblocks a server still waiting for us
            throw clientFailed(e, server, serverFailure);
        }
        return serverDone(o, server, serverFailure, serverText, pair);
    }

    /**
     * The server side of an in-process run: on {@code serverCtx} if given, else on device {@code name}; if it cannot be
     * made, {@code clientCtx} (given with it, or null) is closed too, as the run would have.
     */
    static PerfSide serverSide(PerfParams sp, String name, Context serverCtx, Context clientCtx) {
        try {
            return serverCtx != null ? new PerfSide(sp, serverCtx) : new PerfSide(sp, name);
        } catch (RuntimeException e) {
            if (clientCtx != null) {
                clientCtx.close();
            }
            throw e;
        }
    }

    /** The in-process client failed: its error, with the server thread's if it failed too (once it has ended). */
    static IOException clientFailed(Exception e, Thread server, AtomicReference<Throwable> serverFailure) {
        join(server);
        Throwable sf = serverFailure.get();
        return new IOException(HwLab.describe(e) + (sf != null ? " [server side: " + HwLab.describe(sf) + "]" : ""), e);
    }

    /**
     * The in-process client's outcome {@code o}, once the server thread has ended well, named as the client's run
     * against server {@code pair[0]}; the server's failure or hang otherwise.
     */
    static PerfOutcome serverDone(PerfOutcome o, Thread server, AtomicReference<Throwable> serverFailure,
                                  StringWriter serverText, String[] pair) throws IOException {
        join(server);
        if (server.isAlive()) {
            throw new IOException("the in-process server did not finish; its output so far:\n" + serverText);
        }
        if (serverFailure.get() != null) {
            throw new IOException("server side failed: " + HwLab.describe(serverFailure.get()), serverFailure.get());
        }
        o.peerDevice = pair[0];
        o.device = pair[1];
        o.role = "client (in-process, server " + pair[0] + ")";
        return o;
    }

    static void join(Thread t) {
        try {
            t.join(LOCAL_TIMEOUT_MILLIS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
