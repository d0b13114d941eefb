package io.jhca.rxe;

import org.agrona.DirectBuffer;

import io.jhca.rxe.transport.SendRing;
import io.jhca.rxe.transport.SendWqe;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.MemoryWindow;
import io.jhca.verbs.MwBind;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.WrOpcode;

/**
 * The in-place send builder of an rxe QP: each call writes its field straight into the WQE slot at the ring's
 * tail; {@code complete()} publishes the batch with one release store. Nothing is allocated.
 */
final class RxeSendQueue extends SendQueue {

    private final SendRing sq;
    private final io.jhca.rxe.transport.Engine engine;
    private SendWqe open;

    RxeSendQueue(final RxeQp qp, final SendRing sq, final io.jhca.rxe.transport.Engine engine) {
        super(qp);
        this.sq = sq;
        this.engine = engine;
    }

    @Override
    protected void driverStart() {
        open = null;
    }

    @Override
    protected boolean driverOpenWr(final WrOpcode op, final long wrId, final int sendFlags, final int imm,
            final int rkey, final long remoteAddr, final long compareAdd, final long swap) {
        final SendWqe w = sq.tailSlot();
        if (w == null) {
            return false;
        }
        w.open(wrId, op, sendFlags, imm, rkey, remoteAddr, compareAdd, swap);
        if (op == WrOpcode.LOCAL_INV || op == WrOpcode.SEND_WITH_INV) {
            w.invalidateRkey = imm;
        }
        open = w;
        return true;
    }

    @Override
    protected void driverBindMw(final MemoryWindow mw, final int rkey, final MwBind bind) {
        open.window = ((RxeMw) mw).window();
        open.bindRkey = rkey;
        open.bindMr = bind.mr();
        open.bindAddr = bind.addr();
        open.bindLength = bind.length();
        open.bindAccess = bind.access();
    }

    @Override
    protected void driverUdAddr(final AddressHandle ah, final int remoteQpn, final int remoteQkey) {
        open.udPeer = ((RxeAh) ah).peer();
        open.remoteQpn = remoteQpn;
        open.remoteQkey = remoteQkey;
    }

    @Override
    protected void driverSge(final int lkey, final long addr, final int length) {
        open.addSge(addr, length, lkey);
    }

    @Override
    protected void driverInline(final DirectBuffer src, final int offset, final int length) {
        open.inline = true;
        open.inlineData.putBytes(open.inlineLength, src, offset, length);
        open.inlineLength += length;
        open.length = open.inlineLength;
    }

    @Override
    protected void driverCloseWr() {
        sq.advanceTail();
        open = null;
    }

    @Override
    protected void driverComplete() {
        sq.publish();
        engine.notifyPosted();
    }

    @Override
    protected void driverAbort() {
        sq.rollback();
        open = null;
    }
}
