package io.jhca.cm.ib;

import java.util.ArrayList;
import java.util.List;

import io.jhca.cm.mad.RejectReason;
import io.jhca.cm.mad.RepMessage;
import io.jhca.cm.mad.ReqMessage;
import io.jhca.verbs.Gid;

/** Records what a connection manager reports; accepts every REP. */
class Recorder implements CmConnection.Upcall, ConnectionManager.Listener {
    final List<String> events = new ArrayList<>();
    final List<CmConnection> requests = new ArrayList<>();
    RejectReason rejected;
    int rejectCode;
    byte[] rejectData;

    @Override
    public RejectReason onReply(CmConnection c, RepMessage rep) {
        events.add("REPLY");
        return null;
    }

    @Override
    public void onEstablished(CmConnection c) {
        events.add("ESTABLISHED");
    }

    @Override
    public void onRejected(CmConnection c, RejectReason reason, int code, byte[] pd) {
        events.add("REJECTED");
        rejected = reason;
        rejectCode = code;
        rejectData = pd;
    }

    @Override
    public void onUnreachable(CmConnection c) {
        events.add("UNREACHABLE");
    }

    @Override
    public void onDisconnected(CmConnection c, byte[] pd) {
        events.add("DISCONNECTED");
    }

    @Override
    public void onTimewaitExit(CmConnection c) {
        events.add("TIMEWAIT_EXIT");
    }

    @Override
    public void onRequest(CmConnection c, ReqMessage req, Gid source) {
        events.add("REQUEST");
        c.upcall(this);
        requests.add(c);
    }
}
