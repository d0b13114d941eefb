package io.jhca.cm;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

import io.jhca.cm.ib.CmConnection;
import io.jhca.cm.ib.CmState;
import io.jhca.cm.mad.CmMessages;
import io.jhca.cm.mad.CmaHeader;
import io.jhca.cm.mad.RejectReason;
import io.jhca.cm.mad.RepMessage;
import io.jhca.cm.mad.ReqMessage;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.VerbsException;

/**
 * An rdma_cm identifier ({@code struct rdma_cm_id}) in the TCP port space, RC: the client side resolves the
 * destination's address and route, creates its QP and connects; the server side binds, listens and gets a new ID
 * with each CONNECT_REQUEST, which it accepts or rejects. Results arrive as events on the channel.
 *
 * <p>As rdma_cm does over RoCE: the device is the attached one whose GID table holds the source address, the
 * destination GID is the destination IP address (IPv4-mapped), no path record is queried (the path is built from
 * the route: hop limit 64, LIDs 0xFFFF), the service ID is 0x0106 &lt;&lt; 16 | port, and the REQ's private data
 * starts with the cma header carrying both addresses. {@link #connect} and {@link #accept} move the QP through
 * RTR to RTS with the exchanged QPNs and PSNs; {@link #disconnect} moves it to ERR.
 */
public final class CmId implements AutoCloseable {
    /** librdmacm's default IPv4 hop limit for RoCEv2 paths. */
    static final int HOP_LIMIT = 64;
    /** Packet rate of the path: 10 Gb/s (IBTA Table 226 code 3), what the REQ carries; no rate limit is applied. */
    static final int PACKET_RATE = 3;
    private static final byte[] NONE = new byte[0];

    private final CmEventChannel channel;
    private final CmId listener;
    private CmAgent agent;
    private int gidIndex = -1;
    private InetSocketAddress local;
    private InetSocketAddress remote;
    private Gid remoteGid;
    private boolean routeResolved;
    private QueuePair qp;
    private CmConnection conn;
    private ReqMessage request;
    private ConnParam param;
    private final List<CmAgent> listening = new ArrayList<>();
    private volatile boolean connected;
    private volatile boolean closed;

    CmId(CmEventChannel channel) {
        this(channel, null);
    }

    private CmId(CmEventChannel channel, CmId listener) {
        this.channel = channel;
        this.listener = listener;
    }

    /** The device this ID is bound to (after address resolution, bind to an address, or for a request). */
    public Context context() {
        if (agent == null) {
            throw new CmException("the ID is not bound to a device yet");
        }
        return agent.context();
    }

    public InetSocketAddress localAddress() {
        return local;
    }

    public InetSocketAddress remoteAddress() {
        return remote;
    }

    public QueuePair qp() {
        return qp;
    }

    /** The IB CM state of the connection (IDLE before any). */
    public CmState cmState() {
        CmConnection c = conn;
        return c == null ? CmState.IDLE : c.state();
    }

    public boolean isConnected() {
        return connected;
    }

    /** Binds to a local address and port ({@code rdma_bind_addr}); the wildcard address binds to every device. */
    public void bindAddr(InetSocketAddress address) {
        checkOpen();
        if (address.getAddress().isAnyLocalAddress()) {
            local = address;
            return;
        }
        CmDevices.Located l = CmDevices.locate(address.getAddress());
        if (l == null) {
            throw new CmException("bind: no attached RDMA device has the address " + address.getAddress()
                    .getHostAddress() + " in its GID table");
        }
        agent = l.agent();
        gidIndex = l.gidIndex();
        local = address;
    }

    /**
     * Resolves {@code destination} to a device and GIDs ({@code rdma_resolve_addr}): the source address (or, if
     * null, the first attached device with an IPv4 GID) picks the device. Reports ADDR_RESOLVED or ADDR_ERROR.
     */
    public void resolveAddr(InetAddress source, InetSocketAddress destination, long timeoutMillis) {
        checkOpen();
        CmDevices.Located l = null;
        if (source != null) {
            l = CmDevices.locate(source);
        } else if (local != null && !local.getAddress().isAnyLocalAddress()) {
            l = CmDevices.locate(local.getAddress());
        } else {
            for (CmAgent a : CmDevices.agents()) {
                for (int i = 0; i < a.context().queryPort(1).gidTblLen() && l == null; i++) {
                    Gid g = a.context().queryGid(1, i);
                    InetAddress ip = g.toInetAddress();
                    if (ip instanceof Inet4Address == destination.getAddress() instanceof Inet4Address
                            && !g.equals(Gid.ZERO) && !ip.isLinkLocalAddress()) {
                        l = new CmDevices.Located(a, i);
                    }
                }
            }
        }
        if (l == null) {
            channel.post(new CmEvent(CmEventType.ADDR_ERROR, this, null, -VerbsException.ENOENT, NONE));
            return;
        }
        agent = l.agent();
        gidIndex = l.gidIndex();
        InetAddress src = agent.context().queryGid(1, gidIndex).toInetAddress();
        int port = local != null && local.getPort() != 0 ? local.getPort()
                : ThreadLocalRandom.current().nextInt(32768, 61000); // Linux's ephemeral range
        local = new InetSocketAddress(src, port);
        remote = destination;
        remoteGid = Gid.of(destination.getAddress());
        channel.post(new CmEvent(CmEventType.ADDR_RESOLVED, this, null, 0, NONE));
    }

    /** Builds the path from the route, as rdma_cm does on RoCE ({@code rdma_resolve_route}): ROUTE_RESOLVED. */
    public void resolveRoute(long timeoutMillis) {
        checkOpen();
        if (remoteGid == null) {
            throw new CmException("resolve route: the address is not resolved");
        }
        routeResolved = true;
        channel.post(new CmEvent(CmEventType.ROUTE_RESOLVED, this, null, 0, NONE));
    }

    /**
     * Creates this ID's QP on its device in {@code pd} and moves it to INIT ({@code rdma_create_qp}), with remote
     * read, write and atomic access for the peer.
     */
    public QueuePair createQp(ProtectionDomain pd, QpInitAttributes init) {
        checkOpen();
        if (agent == null || pd.context() != agent.context()) {
            throw new CmException("create QP: the PD must be of the ID's device " + (agent == null ? "(none yet)"
                    : agent.context().name()));
        }
        if (qp != null) {
            throw new CmException("create QP: the ID has a QP already");
        }
        QueuePair q = pd.createQp(init);
        q.modify(QpAttributes.toInit(1, Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.REMOTE_READ,
                Access.REMOTE_ATOMIC));
        qp = q;
        return q;
    }

    /** Sends the REQ ({@code rdma_connect}); ESTABLISHED, REJECTED, UNREACHABLE or CONNECT_ERROR follow. */
    public void connect(ConnParam p) {
        checkOpen();
        if (!routeResolved) {
            throw new CmException("connect: the route is not resolved");
        }
        if (qp == null) {
            throw new CmException("connect: the ID has no QP (createQp)");
        }
        byte[] user = p.privateData();
        if (user.length > CmaHeader.REQ_USER_PRIVATE_DATA) {
            throw new CmException("connect: private data of " + user.length + " bytes; a REQ carries "
                    + CmaHeader.REQ_USER_PRIVATE_DATA + " after the cma header");
        }
        byte[] pd = concat(new CmaHeader(local, remote).encode(), user);
        Context ctx = agent.context();
        Mtu mtu = ctx.queryPort(1).activeMtu();
        this.param = p;
        int psn = ThreadLocalRandom.current().nextInt(1 << 24);
        agent.lock();
        try {
            conn = agent.cm().create(remoteGid, gidIndex, new Active());
            ReqMessage req = new ReqMessage(conn.localCommId(), CmaHeader.serviceId(remote.getPort()),
                    ctx.queryDevice().nodeGuid(), qp.qpn(), p.responderResources(), p.initiatorDepth(),
                    p.cmResponseTimeout(), CmMessages.TRANSPORT_RC, psn, p.cmResponseTimeout(), p.retryCount(), 0xFFFF,
                    mtu.value(), p.rnrRetryCount(), p.maxCmRetries(), false, 0xFFFF, 0xFFFF,
                    ctx.queryGid(1, gidIndex).bytes(), remoteGid.bytes(), 0, PACKET_RATE, 0, HOP_LIMIT, 0, false,
                    p.localAckTimeout(), pd);
            agent.cm().connect(conn, req, System.nanoTime());
        } finally {
            agent.unlock();
        }
    }

    /** Listens for connection requests on the bound port ({@code rdma_listen}); at most {@code backlog} pending. */
    public void listen(int backlog) {
        checkOpen();
        if (local == null) {
            throw new CmException("listen: the ID is not bound (bindAddr)");
        }
        long sid = CmaHeader.serviceId(local.getPort());
        List<CmAgent> on = agent != null ? List.of(agent) : CmDevices.agents();
        if (on.isEmpty()) {
            throw new CmException("listen: no RDMA device is attached to connection management");
        }
        for (CmAgent a : on) {
            a.lock();
            try {
                a.cm().listen(sid, backlog, (c, req, source) -> onRequest(a, c, req, source));
                listening.add(a);
            } finally {
                a.unlock();
            }
        }
    }

    private void onRequest(CmAgent a, CmConnection c, ReqMessage req, Gid source) {
        CmId child = new CmId(channel, this);
        child.agent = a;
        child.conn = c;
        child.request = req;
        child.gidIndex = c.sgidIndex();
        byte[] pd = req.privateData();
        byte[] user = NONE;
        try {
            CmaHeader h = CmaHeader.decode(pd, CmaHeader.portOf(req.serviceId()));
            child.remote = h.source();
            child.local = h.destination();
            user = Arrays.copyOfRange(pd, CmaHeader.SIZE, pd.length);
        } catch (IllegalArgumentException e) {
            child.remote = new InetSocketAddress(source.toInetAddress(), 0);
            child.local = local;
            user = pd;
        }
        child.remoteGid = Gid.of(req.primaryLocalGid());
        c.upcall(child.new Passive());
        channel.post(new CmEvent(CmEventType.CONNECT_REQUEST, child, this, 0, user));
    }

    /** The connection request's private data after the cma header (for a CONNECT_REQUEST's ID). */
    public ReqMessage request() {
        return request;
    }

    /** Accepts the request ({@code rdma_accept}): QP to RTR and RTS, REP sent; ESTABLISHED follows the RTU. */
    public void accept(ConnParam p) {
        checkOpen();
        if (request == null) {
            throw new CmException("accept: the ID is not a connection request");
        }
        if (qp == null) {
            throw new CmException("accept: the ID has no QP (createQp)");
        }
        ReqMessage req = request;
        this.param = p;
        Context ctx = agent.context();
        Mtu own = ctx.queryPort(1).activeMtu();
        Mtu mtu = Mtu.of(Math.min(own.value(), Math.max(1, req.pathMtu())));
        int psn = ThreadLocalRandom.current().nextInt(1 << 24);
        int resp = Math.min(p.responderResources(), req.initiatorDepth());
        int depth = Math.min(p.initiatorDepth(), req.responderResources());
        // The REQ's starting PSN is what the active side receives, the REP's what it sends (Linux cm.c:
        // ib_send_cm_req sets rq_psn from the REQ, cm_rep_handler sq_psn from the REP)
        QpAttributes rtr = QpAttributes.toRtr(req.localQpn(), psn,
                AhAttributes.to(remoteGid).sgidIndex(gidIndex).hopLimit(HOP_LIMIT), mtu).maxDestRdAtomic(Math.max(1, resp));
        QpAttributes rts = QpAttributes.toRts(req.startingPsn()).timeout(req.localAckTimeout()).retryCnt(req.retryCount())
                .rnrRetry(req.rnrRetryCount()).maxRdAtomic(Math.max(1, depth));
        agent.lock();
        try {
            if (conn.state() != CmState.REQ_RCVD && conn.state() != CmState.MRA_REQ_SENT) {
                throw new CmException("accept: the request is " + conn.state() + " (withdrawn or timed out)");
            }
            qp.modify(rtr);
            qp.modify(rts);
            conn.accept(new RepMessage(conn.localCommId(), conn.remoteCommId(), 0, qp.qpn(), psn, resp, depth, 0, 0,
                    false, p.rnrRetryCount(), false, ctx.queryDevice().nodeGuid(), p.privateData()),
                    System.nanoTime());
        } finally {
            agent.unlock();
        }
    }

    /** Rejects the request ({@code rdma_reject}) with CONSUMER_DEFINED and the private data. */
    public void reject(byte[] privateData) {
        checkOpen();
        if (request == null) {
            throw new CmException("reject: the ID is not a connection request");
        }
        agent.lock();
        try {
            conn.reject(RejectReason.CONSUMER_DEFINED, privateData, System.nanoTime());
        } finally {
            agent.unlock();
        }
    }

    /**
     * Moves the QP to ERR, then sends a DREQ ({@code rdma_disconnect}, in the kernel's order: cma_modify_qp_err before
     * ib_send_cm_dreq, so what the QP still owes its peer, such as an ACK, leaves before the DREQ); DISCONNECTED
     * follows.
     */
    public void disconnect() {
        checkOpen();
        if (conn == null) {
            throw new CmException("disconnect: the ID has no connection");
        }
        agent.lock();
        try {
            toErr();
            if (conn.state() == CmState.ESTABLISHED) {
                conn.disconnect(NONE, System.nanoTime());
            }
        } finally {
            agent.unlock();
        }
    }

    private void toErr() {
        connected = false;
        QueuePair q = qp;
        if (q != null && !q.isClosed() && q.state() != QpState.ERR && q.state() != QpState.RESET) {
            try {
                q.modify(QpAttributes.toState(QpState.ERR));
            } catch (VerbsException e) {
                // the QP is being torn down by its owner
            }
        }
    }

    /**
     * Destroys the ID ({@code rdma_destroy_id}): stops listening, rejects a request or reply in progress and
     * disconnects an established connection (as Linux's cm_destroy_id); the QP is the caller's to close.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        CmConnection c = conn;
        if (c != null && agent != null) {
            agent.lock();
            try {
                c.abandon(System.nanoTime());
            } finally {
                agent.unlock();
            }
        }
        for (CmAgent a : listening) {
            a.lock();
            try {
                a.cm().unlisten(CmaHeader.serviceId(local.getPort()));
            } finally {
                a.unlock();
            }
        }
        listening.clear();
    }

    private void checkOpen() {
        if (closed) {
            throw new IllegalStateException("the CM ID is closed");
        }
    }

    private void post(CmEventType t, int status, byte[] pd) {
        if (closed) {
            return;
        }
        channel.post(new CmEvent(t, this, listener, status, pd));
    }

    private static byte[] concat(byte[] a, byte[] b) {
        byte[] r = Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, r, a.length, b.length);
        return r;
    }

    /** Events common to both sides. */
    private abstract class Side implements CmConnection.Upcall {
        @Override
        public void onEstablished(CmConnection c) {
            connected = true;
            post(CmEventType.ESTABLISHED, 0, NONE);
        }

        @Override
        public void onRejected(CmConnection c, RejectReason reason, int code, byte[] pd) {
            toErr();
            post(CmEventType.REJECTED, code, pd);
        }

        @Override
        public void onUnreachable(CmConnection c) {
            toErr();
            post(CmEventType.UNREACHABLE, -VerbsException.ETIMEDOUT, NONE);
        }

        @Override
        public void onDisconnected(CmConnection c, byte[] pd) {
            toErr();
            post(CmEventType.DISCONNECTED, 0, NONE);
        }

        @Override
        public void onTimewaitExit(CmConnection c) {
            post(CmEventType.TIMEWAIT_EXIT, 0, NONE);
        }
    }

    private final class Active extends Side {
        @Override
        public RejectReason onReply(CmConnection c, RepMessage rep) {
            ReqMessage req = c.req();
            Mtu mtu = Mtu.of(req.pathMtu());
            try {
                qp.modify(QpAttributes.toRtr(rep.localQpn(), req.startingPsn(),
                        AhAttributes.to(remoteGid).sgidIndex(gidIndex).hopLimit(HOP_LIMIT), mtu)
                        .maxDestRdAtomic(Math.max(1, req.responderResources())));
                qp.modify(QpAttributes.toRts(rep.startingPsn()).timeout(req.localAckTimeout())
                        .retryCnt(req.retryCount()).rnrRetry(rep.rnrRetryCount())
                        .maxRdAtomic(Math.max(1, rep.responderResources())));
            } catch (VerbsException e) {
                post(CmEventType.CONNECT_ERROR, -e.errno(), NONE);
                return RejectReason.NO_QP;
            }
            return null;
        }
    }

    private final class Passive extends Side {
        @Override
        public RejectReason onReply(CmConnection c, RepMessage rep) {
            return RejectReason.UNSUPPORTED;
        }
    }
}
