package io.jhca.lab;

import io.jhca.cm.CmEvent;
import io.jhca.cm.CmEventChannel;
import io.jhca.cm.CmEventType;
import io.jhca.cm.CmId;
import io.jhca.cm.ConnParam;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * perftest -R's test QPs (perftest_communication.c create_rdma_cm_connection): rdma_cm creates and connects one RC QP
 * per -q on the -p port, the server listening with a backlog of num_qps and accepting each request as it comes,
 * the client resolving and connecting every ID and retrying the whole round up to 10 times, 100 ms apart (the
 * server listens only after the sync handshake that precedes this). Both sides send responder_resources =
 * initiator_depth = out_reads for READ and ATOMIC tests, 0 otherwise; retry and RNR retry counts 7.
 */
final class PerfCm implements AutoCloseable {
    static final int MAX_RETRIES = 10;
    static final long RETRY_DELAY_MILLIS = 100;

    private final PerfSide s;
    private final InetSocketAddress address;
    private final InetAddress source;
    private final CmEventChannel channel = CmEventChannel.create();
    private CmId[] ids;
    private CmId listener;

    /**
     * @param address server: where to listen; client: the server's address and port
     * @param source  client: the local address to connect from (null: the device's), unused by the server
     */
    PerfCm(PerfSide s, InetSocketAddress address, InetAddress source) {
        this.s = s;
        this.address = address;
        this.source = source;
    }

    private ConnParam param() {
        PerfTest.Verb v = s.p.test().verb();
        int rd = v == PerfTest.Verb.READ || v == PerfTest.Verb.ATOMIC ? s.outReads : 0;
        return ConnParam.defaults().responderResources(rd).initiatorDepth(rd).retryCount(7).rnrRetryCount(7);
    }

    /** Creates and connects the side's QPs; the side's resources (PD, CQs, buffer) exist already. */
    void connect(boolean server, long timeoutMillis) throws IOException {
        if (server) {
            serve(timeoutMillis);
            return;
        }
        IOException last = null;
        for (int attempt = 0; attempt < MAX_RETRIES; attempt++) {
            try {
                dial(timeoutMillis);
                return;
            } catch (IOException e) {
                last = e;
                dropIds();
                sleep(RETRY_DELAY_MILLIS);
            }
        }
        throw new IOException("Failed to connect RDMA CM client, tried " + MAX_RETRIES + " times: "
                + (last == null ? "" : last.getMessage()), last);
    }

    /**
     * Server: listens with a backlog of num_qps. perftest listens only after the sync handshake, so a client's
     * first REQ may find nobody and be rejected, and a round with some QPs accepted and one rejected leaves the
     * accepted ones to a client that has given them up; listening before the handshake (invisible on the wire)
     * closes that window.
     */
    void listen() {
        listener = channel.createId();
        listener.bindAddr(address);
        listener.listen(s.qps.length);
    }

    /** rdma_cm_server_connection: accept num_qps requests, stop listening. */
    private void serve(long timeoutMillis) throws IOException {
        int n = s.qps.length;
        ids = new CmId[n];
        if (listener == null) {
            listen();
        }
        try (CmId l = listener) {
            for (int i = 0; i < n; i++) {
                CmEvent req = await(timeoutMillis);
                while (req.type() != CmEventType.CONNECT_REQUEST) {
                    req = await(timeoutMillis); // an earlier QP's ESTABLISHED
                }
                ids[i] = req.id();
                s.qps[i] = ids[i].createQp(s.pd, s.qpInit());
                ids[i].accept(param());
            }
        } finally {
            listener = null;
        }
    }

    /**
     * _rdma_cm_client_connection: per QP an ID resolved, routed, given its QP and connected. perftest resolves
     * every ID at once; here each waits for the previous one's ESTABLISHED, so a server sees one REQ at a time
     * (two back to back on rxe have lost the second to a CM retransmission, 4 s later).
     */
    private void dial(long timeoutMillis) throws IOException {
        int n = s.qps.length;
        ids = new CmId[n];
        for (int i = 0; i < n; i++) {
            ids[i] = channel.createId();
            ids[i].resolveAddr(source, address, 2000);
            expect(ids[i], CmEventType.ADDR_RESOLVED, timeoutMillis);
            ids[i].resolveRoute(2000);
            expect(ids[i], CmEventType.ROUTE_RESOLVED, timeoutMillis);
            s.qps[i] = ids[i].createQp(s.pd, s.qpInit());
            ids[i].connect(param());
            expect(ids[i], CmEventType.ESTABLISHED, timeoutMillis);
        }
    }

    /** The next event of {@code id} (others, from a round given up, are dropped); it must be {@code type}. */
    private void expect(CmId id, CmEventType type, long timeoutMillis) throws IOException {
        CmEvent e = await(timeoutMillis);
        while (e.id() != id) {
            e = await(timeoutMillis);
        }
        if (e.type() != type) {
            throw new IOException("waiting for " + type + ": " + e);
        }
    }

    /** The IDs of a failed round go, with the QPs they made. */
    private void dropIds() {
        for (int i = 0; ids != null && i < ids.length; i++) {
            if (ids[i] != null) {
                ids[i].close();
            }
            if (s.qps[i] != null) {
                s.qps[i].close();
                s.qps[i] = null;
            }
        }
        ids = null;
    }

    /** The next event that is not TIMEWAIT_EXIT; an error event fails the round. */
    private CmEvent await(long millis) throws IOException {
        long until = millis <= 0 ? Long.MAX_VALUE : System.currentTimeMillis() + millis;
        try {
            while (System.currentTimeMillis() < until) {
                CmEvent e = channel.get(50, TimeUnit.MILLISECONDS);
                if (e == null) {
                    s.ctx.progress();
                    continue;
                }
                if (e.type() == CmEventType.TIMEWAIT_EXIT) {
                    continue;
                }
                if (ERRORS.contains(e.type())) {
                    throw new IOException("RDMA CM event error: " + e);
                }
                return e;
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted waiting for RDMA CM events", e);
        }
        throw new IOException("no RDMA CM event within " + millis + " ms");
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * rdma_cm_disconnect_nodes: every connected ID disconnects; the IDs and channel go (the QPs are the side's).
     */
    @Override
    public void close() {
        for (int i = 0; ids != null && i < ids.length; i++) {
            try {
                if (ids[i] != null && ids[i].isConnected()) {
                    ids[i].disconnect();
                }
            } catch (RuntimeException ignored) {
                // the peer may have gone first
            }
            if (ids[i] != null) {
                ids[i].close();
            }
        }
        if (listener != null) {
            listener.close();
        }
        channel.close();
    }

    /** rdma_cm_events_dispatcher: these end the round (the client retries it). */
    private static final Set<CmEventType> ERRORS = EnumSet.of(CmEventType.REJECTED, CmEventType.UNREACHABLE,
            CmEventType.ADDR_ERROR, CmEventType.ROUTE_ERROR, CmEventType.CONNECT_ERROR, CmEventType.DISCONNECTED,
            CmEventType.DEVICE_REMOVAL);
}
