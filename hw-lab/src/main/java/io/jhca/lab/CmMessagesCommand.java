package io.jhca.lab;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import io.jhca.cm.CmException;
import io.jhca.cm.ConnParam;
import io.jhca.cm.endpoint.EndpointConfig;
import io.jhca.cm.endpoint.RdmaClientEndpoint;
import io.jhca.cm.endpoint.RdmaEndpoint;
import io.jhca.cm.endpoint.RdmaServerEndpoint;
import io.jhca.verbs.Context;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Verbs;

/**
 * rdmacm-utils' ucmatose (cmatose.c) on the endpoint API, one connection: receives are posted before the connect
 * or accept, then each side SENDs {@code -C} messages of {@code -S} bytes and receives as many; the server
 * disconnects (the client does if the server has not within 10 s). Wire-compatible with ucmatose in either role.
 */
@Command(name = "cm-messages", mixinStandardHelpOptions = true,
        description = {"RDMA CM connection test, like rdmacm-utils' ucmatose: with -s connect to that server,",
                "without it listen (-b ADDR). Each side sends -C messages of -S bytes and receives as many."})
public final class CmMessagesCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "-s", paramLabel = "ADDR", description = "server address (client mode)")
    String server;

    @Option(names = "-b", paramLabel = "ADDR", description = "bind address (server: where to listen; client: source)")
    String bind;

    @Option(names = "-p", paramLabel = "PORT", description = "port (default ${DEFAULT-VALUE})")
    int port = 7471;

    @Option(names = "-C", paramLabel = "COUNT", description = "messages each way (default ${DEFAULT-VALUE})")
    int count = 10;

    @Option(names = "-S", paramLabel = "SIZE", description = "message size (default ${DEFAULT-VALUE})")
    int size = 100;

    @Override
    public Integer call() throws Exception {
        if (count < 1 || size < 1 || size > 1 << 20 || port < 1 || port > 65535) {
            throw new ParameterException(spec.commandLine(), "-C, -S and -p must be positive (-S at most 1 MiB)");
        }
        var out = spec.commandLine().getOut();
        InetAddress want = bind != null ? InetAddress.getByName(bind) : null;
        EndpointConfig config = new EndpointConfig(size, count, 4096, 30_000, ConnParam.defaults());
        byte[] message = new byte[size];
        try (Context ctx = open(want)) {
            if (server == null) {
                if (want == null) {
                    throw new ParameterException(spec.commandLine(), "the server needs -b ADDR (its device's address)");
                }
                out.println("cm-messages: starting server");
                try (RdmaServerEndpoint srv = RdmaServerEndpoint.listen(ctx, new InetSocketAddress(want, port), 8,
                        new EndpointConfig(size, count, 4096, 600_000, ConnParam.defaults()));
                     RdmaEndpoint ep = srv.accept()) {
                    exchange(out, messenger(ep), message, count);
                    out.println("disconnecting"); // as cmatose.c's server does; its client waits for it
                }
            } else {
                out.println("cm-messages: starting client");
                try (RdmaEndpoint ep = RdmaClientEndpoint.connect(ctx,
                        new InetSocketAddress(InetAddress.getByName(server), port), config)) {
                    exchange(out, messenger(ep), message, count);
                    if (!ep.awaitDisconnected(10_000)) { // cmatose.c's server disconnects; else we do
                        out.println("disconnecting");
                    }
                }
            }
            out.println("test complete");
            out.flush();
        }
        return 0;
    }

    /** What the exchange needs of a connected endpoint. */
    interface Messenger {
        /** Sends a message and waits until it is acknowledged; a CmException if it completed in error. */
        void send(byte[] message);

        byte[] receive();

        /** False once either side disconnected. */
        boolean connected();
    }

    private static Messenger messenger(RdmaEndpoint ep) {
        return new Messenger() {
            @Override
            public void send(byte[] message) {
                ep.send(message);
            }

            @Override
            public byte[] receive() {
                return ep.receive();
            }

            @Override
            public boolean connected() {
                return ep.id().isConnected();
            }
        };
    }

    /**
     * cmatose.c's data phase: {@code count} messages sent, each acknowledged, then {@code count} received, each of
     * {@code message.length} bytes.
     */
    static void exchange(java.io.PrintWriter out, Messenger ep, byte[] message, int count) {
        out.println("initiating data transfers");
        for (int i = 0; i < count; i++) {
            try {
                ep.send(message);
            } catch (CmException e) {
                if (i + 1 < count || ep.connected()) {
                    throw e;
                }
                // The peer disconnected before it acknowledged the last message, which it takes only after all the
                // others: Linux rxe completes a receive before it sends its ACK (rxe_resp.c: complete, then
                // acknowledge), and a cmatose.c server that disconnects at its last receive can move its QP to ERR
                // in between, so that ACK never leaves. cmatose.c counts its send completions whatever their status.
                out.println("the peer disconnected before acknowledging message " + count + ": " + e.getMessage());
            }
        }
        out.println("receiving data transfers");
        for (int i = 0; i < count; i++) {
            byte[] m = ep.receive();
            if (m.length != message.length) {
                throw new IllegalStateException("message " + i + " has " + m.length + " bytes, expected "
                        + message.length);
            }
        }
        out.println("data transfers complete");
        out.flush();
    }

    /** The first device that opens and has {@code want} in its GID table (any, if null) and a QP1. */
    static Context open(InetAddress want) {
        for (DeviceInfo d : Verbs.devices()) {
            Context c;
            try {
                c = Verbs.open(d.name());
            } catch (RuntimeException e) {
                continue;
            }
            if (c.supportsGsi() && (want == null || has(c, Gid.of(want)))) {
                return c;
            }
            c.close();
        }
        throw new IllegalStateException("no RDMA device with a QP1" + (want == null ? "" : " and address "
                + want.getHostAddress()) + " could be opened");
    }

    private static boolean has(Context c, Gid g) {
        for (int i = 0; i < c.queryPort(1).gidTblLen(); i++) {
            if (g.equals(c.queryGid(1, i))) {
                return true;
            }
        }
        return false;
    }
}
