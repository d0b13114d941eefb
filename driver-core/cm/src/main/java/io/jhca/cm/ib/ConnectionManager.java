package io.jhca.cm.ib;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import io.jhca.cm.mad.CmMessages;
import io.jhca.cm.mad.Mad;
import io.jhca.cm.mad.RejectReason;
import io.jhca.cm.mad.ReqMessage;
import io.jhca.cm.mad.ShortMessages;
import io.jhca.verbs.Gid;

/**
 * The IB CM of one port: its connections by local communication ID, its listeners by service ID, the dispatch of
 * received CM MADs and the timers. Not thread safe: its owner serializes every call (one lock or one thread).
 *
 * <p>A REQ for a service nobody listens on is rejected with INVALID_SERVICE_ID (Linux cm_match_req); a REQ beyond
 * a listener's backlog (requests not yet accepted or rejected) with NO_RESOURCES; a REQ already known (same remote
 * communication ID and CA GUID) is a retransmission and gets the answer it got before. A DREQ for an unknown
 * connection gets a DREP (IBTA 12.9.7.4, Linux cm_issue_drep).
 */
public final class ConnectionManager {
    private static final byte[] NONE = new byte[0];

    /** A passive side's listener for one service ID. */
    public interface Listener {
        /** A new request; the listener answers later by accept or reject on the connection. */
        void onRequest(CmConnection c, ReqMessage req, Gid source);
    }

    private record ListenerEntry(Listener listener, int backlog) {
    }

    private record RemoteKey(int commId, long caGuid) {
    }

    private final CmWire wire;
    private final long caGuid;
    private final Map<Integer, CmConnection> byLocalId = new HashMap<>();
    private final Map<RemoteKey, CmConnection> byRemote = new HashMap<>();
    private final Map<Long, ListenerEntry> listeners = new HashMap<>();
    private final Map<CmConnection, Long> pendingOf = new HashMap<>();
    private final Map<Long, Integer> pendingCount = new HashMap<>();
    private final int tidHigh = ThreadLocalRandom.current().nextInt();
    private int nextCommId = ThreadLocalRandom.current().nextInt();
    private int tidLow;
    private long retries;
    private long sent;

    public ConnectionManager(CmWire wire, long caGuid) {
        this.wire = wire;
        this.caGuid = caGuid;
    }

    public long caGuid() {
        return caGuid;
    }

    /** MADs sent again because their answer did not come in time. */
    public long retries() {
        return retries;
    }

    public long madsSent() {
        return sent;
    }

    /** A new active-side connection to {@code peer}; {@link #connect} sends its REQ. */
    public CmConnection create(Gid peer, int sgidIndex, CmConnection.Upcall upcall) {
        CmConnection c = new CmConnection(this, allocateCommId(), true, peer, sgidIndex, upcall);
        byLocalId.put(c.localCommId(), c);
        return c;
    }

    public void connect(CmConnection c, ReqMessage req, long now) {
        c.connect(req, now);
    }

    public void listen(long serviceId, int backlog, Listener l) {
        if (listeners.containsKey(serviceId)) {
            throw new IllegalStateException("service ID 0x" + Long.toHexString(serviceId) + " already has a listener");
        }
        listeners.put(serviceId, new ListenerEntry(l, Math.max(1, backlog)));
    }

    public void unlisten(long serviceId) {
        listeners.remove(serviceId);
    }

    public boolean isListening(long serviceId) {
        return listeners.containsKey(serviceId);
    }

    /** The request was answered (accepted or rejected): it no longer counts against the backlog. */
    public void answered(CmConnection c) {
        Long sid = pendingOf.remove(c);
        if (sid != null) {
            pendingCount.merge(sid, -1, Integer::sum);
        }
    }

    /** Dispatches one received MAD from {@code source}. */
    public void deliver(Mad m, Gid source, long now) {
        if (m.mgmtClass() != Mad.CLASS_CM || m.baseVersion() != Mad.BASE_VERSION) {
            return;
        }
        if (m.attributeId() == CmMessages.REQ) {
            onReq(m, source, now);
            return;
        }
        int ours = m.getInt(CmMessages.REMOTE_COMM_ID);
        CmConnection c = byLocalId.get(ours);
        if (c == null && m.attributeId() == CmMessages.REJ
                && m.getInt(CmMessages.Rej.REASON) == RejectReason.TIMEOUT.code()
                && m.getInt(CmMessages.Rej.REJECTED_INFO_LENGTH) >= 8) {
            // a REQ withdrawn before its sender knew our ID: found by the sender's ID and CA GUID (in the ARI)
            long guid = m.get(new io.jhca.cm.mad.MadField("ARI CA GUID", CmMessages.Rej.ARI, 0, 64));
            c = byRemote.get(new RemoteKey(m.getInt(CmMessages.LOCAL_COMM_ID), guid));
        }
        if (c == null) {
            if (m.attributeId() == CmMessages.DREQ) {
                send(ShortMessages.drep(m.tid(), ours, m.getInt(CmMessages.LOCAL_COMM_ID), NONE), source, 0);
            }
            return;
        }
        c.onMad(m, now);
    }

    private void onReq(Mad m, Gid source, long now) {
        if (m.classVersion() != Mad.CM_CLASS_VERSION) {
            return;
        }
        ReqMessage req = ReqMessage.decode(m);
        RemoteKey key = new RemoteKey(req.localCommId(), req.localCaGuid());
        CmConnection known = byRemote.get(key);
        if (known != null) {
            known.onDuplicateReq();
            return;
        }
        ListenerEntry l = listeners.get(req.serviceId());
        int sgid = 0;
        if (l == null) {
            send(ShortMessages.rej(m.tid(), 0, req.localCommId(), CmMessages.MSG_REQ, RejectReason.INVALID_SERVICE_ID,
                    NONE, NONE), source, sgid);
            return;
        }
        if (req.transportServiceType() != CmMessages.TRANSPORT_RC && req.transportServiceType() != CmMessages.TRANSPORT_UC) {
            send(ShortMessages.rej(m.tid(), 0, req.localCommId(), CmMessages.MSG_REQ,
                    RejectReason.INVALID_TRANSPORT_TYPE, NONE, NONE), source, sgid);
            return;
        }
        int pending = pendingCount.getOrDefault(req.serviceId(), 0);
        if (pending >= l.backlog()) {
            send(ShortMessages.rej(m.tid(), 0, req.localCommId(), CmMessages.MSG_REQ, RejectReason.NO_RESOURCES,
                    NONE, NONE), source, sgid);
            return;
        }
        CmConnection c = new CmConnection(this, allocateCommId(), false, source, sgidIndexFor(req), null);
        c.received(req, m.tid());
        byLocalId.put(c.localCommId(), c);
        byRemote.put(key, c);
        pendingOf.put(c, req.serviceId());
        pendingCount.merge(req.serviceId(), 1, Integer::sum);
        l.listener().onRequest(c, req, source);
    }

    /** The local GID index a passive connection answers from: chosen by the owner through {@link #gidIndexer}. */
    private int sgidIndexFor(ReqMessage req) {
        return gidIndexer == null ? 0 : gidIndexer.applyAsInt(Gid.of(req.primaryRemoteGid()));
    }

    private java.util.function.ToIntFunction<Gid> gidIndexer;

    /** Maps a local GID (the REQ's primary remote GID) to its index in the GID table, for the answers' source. */
    public void gidIndexer(java.util.function.ToIntFunction<Gid> f) {
        this.gidIndexer = f;
    }

    /** Fires due timers; returns the earliest deadline left (Long.MAX_VALUE if none). */
    public long tick(long now) {
        long next = Long.MAX_VALUE;
        List<CmConnection> all = new ArrayList<>(byLocalId.values());
        for (CmConnection c : all) {
            c.tick(now);
            next = Math.min(next, c.deadline());
        }
        return next;
    }

    public int connections() {
        return byLocalId.size();
    }

    long newTid() {
        return ((long) tidHigh << 32) | (++tidLow & 0xFFFFFFFFL);
    }

    void countRetry() {
        retries++;
    }

    void send(Mad m, Gid dest, int sgidIndex) {
        sent++;
        wire.send(m, dest, sgidIndex);
    }

    void forget(CmConnection c) {
        byLocalId.remove(c.localCommId());
        byRemote.remove(new RemoteKey(c.remoteCommId(), c.remoteCaGuid()));
        answered(c);
    }

    private int allocateCommId() {
        int id;
        do {
            id = nextCommId++;
        } while (id == 0 || byLocalId.containsKey(id));
        return id;
    }
}
