package io.jhca.rxe;

import org.agrona.UnsafeApi;

import io.jhca.rxe.transport.Peer;
import io.jhca.rxe.transport.RecvRing;
import io.jhca.rxe.transport.RecvSource;
import io.jhca.rxe.transport.SendRing;
import io.jhca.rxe.transport.SendWqe;
import io.jhca.rxe.transport.TransportQp;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.QpAttrMask;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.Sge;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.MwBind;
import io.jhca.verbs.WrOpcode;

/**
 * A QP of an rxe device. Posting writes WQEs straight into preallocated ring slots (SGE descriptors copied,
 * data not; INLINE data copied into the slot) and publishes them with one release store (the doorbell); the
 * device's engine does the rest. QP numbers start at 0x11 as in rxe; QP1 (GSI) is created on request
 * ({@link QpInitAttributes#gsi}), once per device.
 */
final class RxeQp extends QueuePair implements TransportQp.Events {

    private final RxeContext context;
    private final SendRing sq;
    /** The QP's own receive queue; null when it takes its receives from an SRQ. */
    private final RecvRing rq;
    private final TransportQp transport;
    private final RxeSendQueue builder;

    /** @param gsiQpn 1 for the GSI QP (claimed by the PD), 0 to allocate a QPN */
    RxeQp(final RxePd pd, final QpInitAttributes init, final QpCapabilities requested, final int gsiQpn) {
        super(pd, init, requested);
        this.context = pd.rxe();
        final int qpn = gsiQpn != 0 ? gsiQpn : context.allocateQpn();
        qpn(qpn);
        this.sq = new SendRing(requested.maxSendWr(), requested.maxSendSge(), requested.maxInlineData());
        this.rq = init.srq() == null ? new RecvRing(requested.maxRecvWr(), requested.maxRecvSge()) : null;
        capabilities(new QpCapabilities(sq.capacity(), rq == null ? 0 : rq.capacity(), requested.maxSendSge(),
                requested.maxRecvSge(), requested.maxInlineData()));
        final RecvSource recv = rq != null ? rq : ((RxeSrq) init.srq()).transport().receiver();
        this.transport = new TransportQp(context.engine(), qpn, init.type(), pd, ((RxeCq) init.sendCq()).ring(),
                ((RxeCq) init.recvCq()).ring(), init.sqSigAll(), sq, recv, this);
        this.builder = new RxeSendQueue(this, sq, context.engine());
        transport.blockSelfMulticastLoopback(init.isBlockSelfMulticastLoopback());
        context.engine().addQp(transport);
    }

    /** This QP's counters (the per-QP subset of the device's, see RxeCounters). */
    public io.jhca.rxe.transport.RxeCounters counters() {
        return transport.counters();
    }

    @Override
    public java.util.Map<String, Long> statistics() {
        return transport.counters().snapshotPerQp();
    }

    @Override
    public SendQueue sendQueue() {
        return builder;
    }

    @Override
    protected void driverModify(final QpAttributes attr, final QpState current, final QpState next) {
        final Peer peer = attr.has(QpAttrMask.AV) ? RxeAh.peerOf(context, attr.ah(), "modify " + describe()) : null;
        final QpAttributes copy = attr.copy();
        if (next == QpState.ERR) {
            enterError(); // before the engine flushes: no WR_FLUSH_ERR can be polled while the QP says otherwise
        }
        context.engine().runOnEngine(() -> transport.applyModify(copy, next, peer));
    }

    @Override
    protected boolean driverPostSend(final SendWr wr) {
        final SendWqe w = sq.tailSlot();
        if (w == null) {
            return false;
        }
        w.open(wr.wrId(), wr.opcode(), wr.sendFlags(), wr.immData(), wr.rkey(), wr.remoteAddr(), wr.compareAdd(),
                wr.swap());
        if ((wr.sendFlags() & SendFlags.INLINE) != 0) {
            copyInline(wr, w);
        } else {
            for (int i = 0; i < wr.numSge(); i++) {
                final Sge s = wr.sge(i);
                w.addSge(s.addr(), s.length(), s.lkey());
            }
        }
        if (wr.opcode() == WrOpcode.BIND_MW) {
            final MwBind b = wr.bindInfo();
            w.window = ((RxeMw) wr.mw()).window();
            w.bindRkey = wr.bindRkey();
            w.bindMr = b.mr();
            w.bindAddr = b.addr();
            w.bindLength = b.length();
            w.bindAccess = b.access();
        } else if (wr.opcode() == WrOpcode.LOCAL_INV || wr.opcode() == WrOpcode.SEND_WITH_INV) {
            w.invalidateRkey = wr.invalidateRkey();
        }
        if (wr.ah() != null) {
            w.udPeer = ((RxeAh) wr.ah()).peer();
            w.remoteQpn = wr.remoteQpn();
            w.remoteQkey = wr.remoteQkey();
        }
        sq.advanceTail();
        return true;
    }

    /**
     * INLINE: the gathered bytes are copied into the slot now. Java cannot check a raw address, so each SGE must
     * lie in a registration of this QP's PD (found by its lkey); anything else is refused.
     */
    private void copyInline(final SendWr wr, final SendWqe w) {
        w.inline = true;
        int at = 0;
        for (int i = 0; i < wr.numSge(); i++) {
            final Sge s = wr.sge(i);
            if (s.length() == 0) {
                continue;
            }
            final MemoryRegion mr = context.mrTable().byLkey(s.lkey());
            // held for the copy: a deregistration (and the region's close) from another thread waits for it
            if (mr == null || !mr.hold()) {
                throw badInlineSge(s);
            }
            try {
                if (mr.pd() != pd() || !mr.contains(s.addr(), s.length() & 0xFFFFFFFFL)) {
                    throw badInlineSge(s);
                }
                w.inlineData.boundsCheck(at, s.length());
                UnsafeApi.copyMemory(null, s.addr(), w.inlineData.byteArray(), w.inlineData.addressOffset() + at, s.length());
            } finally {
                mr.unhold();
            }
            at += s.length();
        }
        w.inlineLength = at;
        w.length = at;
    }

    private VerbsException badInlineSge(final Sge s) {
        sq.rollback();
        return new VerbsException(VerbsException.EINVAL, "post send on " + describe() + ": INLINE SGE " + s
                + " does not lie in a memory registration of this QP's PD");
    }

    @Override
    protected void driverRingSendDoorbell() {
        sq.publish();
        context.engine().notifyPosted();
    }

    @Override
    protected boolean driverPostRecv(final RecvWr wr) {
        return RecvPosting.post(rq, wr);
    }

    @Override
    protected void driverRingRecvDoorbell() {
        rq.publish();
        context.engine().notifyPosted();
    }

    @Override
    public void enteredError(final AsyncEvent.Type event, final String detail) {
        enterError();
        if (event != null) {
            context.post(AsyncEvent.of(event, this, detail));
        }
    }

    @Override
    public void lastWqeReached() {
        context.post(AsyncEvent.of(AsyncEvent.Type.QP_LAST_WQE_REACHED, this,
                "the QP is in the error state and takes no more WQEs from " + srq().describe()));
    }

    @Override
    protected void driverAttachMcast(final io.jhca.verbs.Gid mgid, final int mlid) {
        context.engine().attachMcast(transport, mgid);
    }

    @Override
    protected void driverDetachMcast(final io.jhca.verbs.Gid mgid, final int mlid) {
        context.engine().detachMcast(transport, mgid);
    }

    @Override
    protected void destroy() {
        context.engine().removeQp(transport);
        if (qpn() == 1) {
            context.releaseGsiQpn();
        }
    }
}
