package io.jhca.cm.ib;

import io.jhca.cm.mad.CmMessages;
import io.jhca.cm.mad.Mad;
import io.jhca.cm.mad.RejectReason;
import io.jhca.cm.mad.RepMessage;
import io.jhca.cm.mad.ReqMessage;
import io.jhca.cm.mad.ShortMessages;
import io.jhca.verbs.Gid;

/**
 * One connection's IB CM state machine (IBTA 12.9, Figure 140), for RC and UC. Driven by its
 * {@link ConnectionManager} under the manager's lock: received MADs, the owner's calls and timer ticks, each with
 * the time now. A MAD that waits for an answer (REQ, REP, DREQ) is sent again when the answer does not come in
 * time, up to the retry count; an MRA stretches the wait by the time it asks for. Outcomes go to the
 * {@link Upcall}.
 */
public final class CmConnection {
    private static final byte[] NONE = new byte[0];

    /** What the owner (rdma_cm's layer) hears. Called under the manager's lock, on the manager's thread. */
    public interface Upcall {
        /** Active side: the REP arrived; prepare the QP (RTR, RTS). Return null to accept, or a reason to reject. */
        RejectReason onReply(CmConnection c, RepMessage rep);

        /** The connection is established (active: RTU sent; passive: RTU or first data received). */
        void onEstablished(CmConnection c);

        void onRejected(CmConnection c, RejectReason reason, int reasonCode, byte[] privateData);

        /** No answer after every retry (REQ or REP unanswered): rdma_cm's UNREACHABLE. */
        void onUnreachable(CmConnection c);

        /** The connection went down: DREQ received, or our DREQ answered or unanswered. */
        void onDisconnected(CmConnection c, byte[] privateData);

        void onTimewaitExit(CmConnection c);
    }

    private final ConnectionManager cm;
    private final int localCommId;
    private final boolean active;
    private final Gid peer;
    private final int sgidIndex;
    private Upcall upcall;
    private CmState state = CmState.IDLE;
    private int remoteCommId;
    private long remoteCaGuid;
    private long tid;
    private ReqMessage req;
    private RepMessage rep;
    private Mad pending;
    private long deadline = Long.MAX_VALUE;
    private long timeoutNanos;
    private int retriesLeft;
    private long timewaitNanos;

    CmConnection(ConnectionManager cm, int localCommId, boolean active, Gid peer, int sgidIndex, Upcall upcall) {
        this.cm = cm;
        this.localCommId = localCommId;
        this.active = active;
        this.peer = peer;
        this.sgidIndex = sgidIndex;
        this.upcall = upcall;
    }

    public CmState state() {
        return state;
    }

    public int localCommId() {
        return localCommId;
    }

    public int remoteCommId() {
        return remoteCommId;
    }

    public long remoteCaGuid() {
        return remoteCaGuid;
    }

    public boolean isActive() {
        return active;
    }

    public Gid peer() {
        return peer;
    }

    public int sgidIndex() {
        return sgidIndex;
    }

    /** The REQ sent (active) or received (passive). */
    public ReqMessage req() {
        return req;
    }

    /** The REP received (active) or sent (passive). */
    public RepMessage rep() {
        return rep;
    }

    public void upcall(Upcall u) {
        this.upcall = u;
    }

    @Override
    public String toString() {
        return "CM connection 0x" + Integer.toHexString(localCommId) + " (" + state + ")";
    }

    // ---------------------------------------------------------------------------------------------- the owner's calls

    /** Active: sends the REQ and waits for a REP (its RemoteCMResponseTimeout) up to MaxCMRetries more times. */
    void connect(ReqMessage r, long now) {
        expect(CmState.IDLE, "connect");
        this.req = r;
        this.tid = cm.newTid();
        this.timewaitNanos = CmTimeouts.nanos(r.localAckTimeout());
        sendAwaiting(r.encode(tid), CmState.REQ_SENT, CmTimeouts.nanos(r.remoteCmResponseTimeout()),
                r.maxCmRetries(), now);
    }

    /** Passive: a REQ arrived (the manager checked it is new). */
    void received(ReqMessage r, long reqTid) {
        this.req = r;
        this.tid = reqTid;
        this.remoteCommId = r.localCommId();
        this.remoteCaGuid = r.localCaGuid();
        this.timewaitNanos = CmTimeouts.nanos(r.localAckTimeout());
        state = CmState.REQ_RCVD;
    }

    /** Passive: sends the REP (the QP is ready to receive) and waits for the RTU. */
    public void accept(RepMessage r, long now) {
        if (state != CmState.REQ_RCVD && state != CmState.MRA_REQ_SENT) {
            throw new IllegalStateException("accept: " + this + " is not a received request");
        }
        this.rep = r;
        cm.answered(this);
        sendAwaiting(r.encode(tid), CmState.REP_SENT, CmTimeouts.nanos(req.localCmResponseTimeout()),
                req.maxCmRetries(), now);
    }

    /** Passive: asks the active side for more time before the REP (an MRA of the REQ). */
    public void sendMra(int serviceTimeout) {
        if (state != CmState.REQ_RCVD && state != CmState.MRA_REQ_SENT) {
            throw new IllegalStateException("MRA: " + this + " is not a received request");
        }
        state = CmState.MRA_REQ_SENT;
        pending = ShortMessages.mra(tid, localCommId, remoteCommId, CmMessages.MSG_REQ, serviceTimeout, NONE);
        send(pending);
    }

    /** Rejects the REQ (passive) or the REP (active), with a reason and private data. */
    public void reject(RejectReason reason, byte[] privateData, long now) {
        int what;
        switch (state) {
            case REQ_RCVD:
            case MRA_REQ_SENT:
                what = CmMessages.MSG_REQ;
                break;
            case REP_RCVD:
                what = CmMessages.MSG_REP;
                break;
            default:
                throw new IllegalStateException("reject: " + this + " has nothing to reject");
        }
        send(ShortMessages.rej(tid, localCommId, remoteCommId, what, reason, NONE, privateData));
        finish(CmState.IDLE);
    }

    /**
     * The owner goes away (Linux cm_destroy_id): a request or reply in progress is rejected (our own REQ with
     * TIMEOUT, the peer's with CONSUMER_DEFINED), an established connection is disconnected; the connection then
     * finishes on its own (DREP, time wait) without telling anyone.
     */
    public void abandon(long now) {
        Upcall quiet = new Upcall() {
            @Override
            public RejectReason onReply(CmConnection c, RepMessage r) {
                return RejectReason.CONSUMER_DEFINED;
            }

            @Override
            public void onEstablished(CmConnection c) {
            }

            @Override
            public void onRejected(CmConnection c, RejectReason reason, int code, byte[] pd) {
            }

            @Override
            public void onUnreachable(CmConnection c) {
            }

            @Override
            public void onDisconnected(CmConnection c, byte[] pd) {
            }

            @Override
            public void onTimewaitExit(CmConnection c) {
            }
        };
        this.upcall = quiet;
        switch (state) {
            case REQ_SENT:
            case MRA_REQ_RCVD:
                send(ShortMessages.rej(tid, localCommId, remoteCommId, CmMessages.MSG_OTHER, RejectReason.TIMEOUT,
                        guidAri(), NONE));
                finish(CmState.IDLE);
                break;
            case REQ_RCVD:
            case MRA_REQ_SENT:
                reject(RejectReason.CONSUMER_DEFINED, NONE, now);
                break;
            case REP_SENT:
                send(ShortMessages.rej(tid, localCommId, remoteCommId, CmMessages.MSG_REP,
                        RejectReason.CONSUMER_DEFINED, NONE, NONE));
                finish(CmState.IDLE);
                break;
            case ESTABLISHED:
                disconnect(NONE, now);
                break;
            default:
                break;
        }
    }

    /** Sends a DREQ (ESTABLISHED) and waits for the DREP; the QP is the owner's to move to ERR. */
    public void disconnect(byte[] privateData, long now) {
        if (state != CmState.ESTABLISHED) {
            throw new IllegalStateException("disconnect: " + this + " is not established");
        }
        int remoteQpn = active ? rep.localQpn() : req.localQpn();
        long dtid = cm.newTid();
        sendAwaiting(ShortMessages.dreq(dtid, localCommId, remoteCommId, remoteQpn, privateData), CmState.DREQ_SENT,
                waitNanos(), maxRetries(), now);
    }

    private long waitNanos() {
        return CmTimeouts.nanos(active ? req.remoteCmResponseTimeout() : req.localCmResponseTimeout());
    }

    private int maxRetries() {
        return req.maxCmRetries();
    }

    // ---------------------------------------------------------------------------------------------- received MADs

    void onMad(Mad m, long now) {
        switch (m.attributeId()) {
            case CmMessages.REP: onRep(m, now); break;
            case CmMessages.RTU: onRtu(); break;
            case CmMessages.MRA: onMra(m, now); break;
            case CmMessages.REJ: onRej(m); break;
            case CmMessages.DREQ: onDreq(m, now); break;
            case CmMessages.DREP: onDrep(m, now); break;
            case CmMessages.REQ: onDuplicateReq(); break;
            default: break;
        }
    }

    private void onRep(Mad m, long now) {
        RepMessage r = RepMessage.decode(m);
        if (state == CmState.ESTABLISHED && rep != null && active) {
            send(ShortMessages.rtu(tid, localCommId, remoteCommId, NONE)); // our RTU was lost: IBTA 12.9.7.2
            return;
        }
        if (state != CmState.REQ_SENT && state != CmState.MRA_REQ_RCVD) {
            return;
        }
        this.rep = r;
        this.remoteCommId = r.localCommId();
        this.remoteCaGuid = r.localCaGuid();
        state = CmState.REP_RCVD;
        deadline = Long.MAX_VALUE;
        RejectReason no = upcall.onReply(this, r);
        if (state != CmState.REP_RCVD) {
            return; // the owner rejected or dropped it already
        }
        if (no != null) {
            reject(no, NONE, now);
            return;
        }
        send(ShortMessages.rtu(tid, localCommId, remoteCommId, NONE));
        state = CmState.ESTABLISHED;
        upcall.onEstablished(this);
    }

    private void onRtu() {
        if (state == CmState.REP_SENT || state == CmState.MRA_REQ_SENT) {
            state = CmState.ESTABLISHED;
            deadline = Long.MAX_VALUE;
            pending = null;
            upcall.onEstablished(this);
        }
    }

    /** Data arrived on the QP before the RTU (IBTA 12.9.7.3 COMM_EST): established as if the RTU had come. */
    public void communicationEstablished() {
        if (state == CmState.REP_SENT) {
            onRtu();
        }
    }

    private void onMra(Mad m, long now) {
        int mraed = m.getInt(CmMessages.Mra.MESSAGE_MRAED);
        long extra = CmTimeouts.nanos(m.getInt(CmMessages.Mra.SERVICE_TIMEOUT));
        if (state == CmState.REQ_SENT && mraed == CmMessages.MSG_REQ) {
            state = CmState.MRA_REQ_RCVD;
            deadline = now + extra + timeoutNanos; // no resend while the peer works on it (IBTA 12.9.7.1)
        } else if (state == CmState.MRA_REQ_RCVD && mraed == CmMessages.MSG_REQ) {
            deadline = now + extra + timeoutNanos;
        }
    }

    private void onRej(Mad m) {
        if (state == CmState.IDLE || state == CmState.TIMEWAIT || state == CmState.ESTABLISHED
                || state == CmState.DREQ_SENT || state == CmState.DREQ_RCVD) {
            return;
        }
        int code = m.getInt(CmMessages.Rej.REASON);
        byte[] pd = m.getBytes(CmMessages.Rej.PRIVATE_DATA, CmMessages.Rej.PRIVATE_DATA_SIZE);
        finish(CmState.IDLE);
        upcall.onRejected(this, RejectReason.of(code), code, pd);
    }

    private void onDreq(Mad m, long now) {
        byte[] pd = m.getBytes(CmMessages.Dreq.PRIVATE_DATA, CmMessages.Dreq.PRIVATE_DATA_SIZE);
        long dtid = m.tid();
        switch (state) {
            case REP_SENT:
            case ESTABLISHED:
            case DREQ_SENT:
                // DREQs crossing: each side answers the other's (IBTA 12.9.7.4)
                send(ShortMessages.drep(dtid, localCommId, remoteCommId, NONE));
                enterTimewait(now);
                upcall.onDisconnected(this, pd);
                break;
            case TIMEWAIT:
                send(ShortMessages.drep(dtid, localCommId, remoteCommId, NONE)); // our DREP was lost
                break;
            default:
                break;
        }
    }

    private void onDrep(Mad m, long now) {
        if (state == CmState.DREQ_SENT) {
            enterTimewait(now);
            upcall.onDisconnected(this, m.getBytes(CmMessages.Drep.PRIVATE_DATA, CmMessages.Drep.PRIVATE_DATA_SIZE));
        }
    }

    /**
     * A REQ we already have: answer what it asks again (IBTA 12.9.7.1, Linux cm_dup_req_handler). While the owner
     * has not answered yet, the active side is retrying because we are slow: an MRA asks it to wait twice its
     * response time instead of giving up.
     */
    void onDuplicateReq() {
        if (state == CmState.REQ_RCVD) {
            sendMra(Math.min(31, req.remoteCmResponseTimeout() + 1));
        } else if (state == CmState.MRA_REQ_SENT && pending != null) {
            send(pending);
        } else if (state == CmState.REP_SENT && pending != null) {
            send(pending);
        }
    }

    // ---------------------------------------------------------------------------------------------- timers

    void tick(long now) {
        if (now < deadline) {
            return;
        }
        switch (state) {
            case REQ_SENT:
            case MRA_REQ_RCVD:
            case REP_SENT:
                if (retriesLeft > 0 && state != CmState.MRA_REQ_RCVD) {
                    retry(now);
                } else {
                    // IBTA 12.9.7.1: the connection times out; the passive side tells the active one by REJ
                    if (state == CmState.REP_SENT) {
                        send(ShortMessages.rej(tid, localCommId, remoteCommId, CmMessages.MSG_REP,
                                RejectReason.TIMEOUT, guidAri(), NONE));
                    } else {
                        send(ShortMessages.rej(tid, localCommId, remoteCommId, CmMessages.MSG_REQ,
                                RejectReason.TIMEOUT, guidAri(), NONE));
                    }
                    finish(CmState.IDLE);
                    upcall.onUnreachable(this);
                }
                break;
            case DREQ_SENT:
                if (retriesLeft > 0) {
                    retry(now);
                } else {
                    enterTimewait(now);
                    upcall.onDisconnected(this, NONE);
                }
                break;
            case TIMEWAIT:
                finish(CmState.IDLE);
                upcall.onTimewaitExit(this);
                break;
            default:
                deadline = Long.MAX_VALUE;
                break;
        }
    }

    long deadline() {
        return deadline;
    }

    private void retry(long now) {
        retriesLeft--;
        cm.countRetry();
        send(pending);
        deadline = now + timeoutNanos;
    }

    private void sendAwaiting(Mad m, CmState next, long wait, int retries, long now) {
        pending = m;
        state = next;
        timeoutNanos = wait;
        retriesLeft = retries;
        deadline = now + wait;
        send(m);
    }

    private void enterTimewait(long now) {
        state = CmState.TIMEWAIT;
        pending = null;
        deadline = now + timewaitNanos;
    }

    private void finish(CmState s) {
        state = s;
        pending = null;
        deadline = Long.MAX_VALUE;
        if (s == CmState.IDLE) {
            cm.forget(this);
        }
    }

    /**
     * A TIMEOUT REJ carries the sender's CA GUID as its additional information, so a peer that does not know our
     * communication ID yet finds the connection by (our ID, GUID) (IBTA 12.6.7.2, Linux cm_acquire_rejected_id).
     */
    private byte[] guidAri() {
        byte[] b = new byte[8];
        long g = cm.caGuid();
        for (int i = 7; i >= 0; i--) {
            b[i] = (byte) g;
            g >>>= 8;
        }
        return b;
    }

    private void send(Mad m) {
        cm.send(m, peer, sgidIndex);
    }

    private void expect(CmState s, String what) {
        if (state != s) {
            throw new IllegalStateException(what + ": " + this + " is not " + s);
        }
    }
}
