package io.jhca.verbs.fake;

import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WrOpcode;
import org.agrona.DirectBuffer;

/** A QP whose queues only count: sends posted, receive WRs posted, doorbells rung, transitions seen. */
public final class FakeQp extends QueuePair {
    public int sendsQueued;
    /** Of those, the WRs postSend's check walk found common ({@code driverPostCommonSend}). */
    public int commonSends;
    public int recvsQueued;
    public int sendDoorbells;
    public int recvDoorbells;
    public int modifies;
    public int batchWqes;
    private int batchStart;
    private SendQueue builder = new FakeSendQueue();

    FakeQp(ProtectionDomain pd, QpInitAttributes init, QpCapabilities caps, int qpn) {
        super(pd, init, caps);
        qpn(qpn);
    }

    @Override
    public SendQueue sendQueue() {
        return builder;
    }

    /** From now on this QP's builder records what it hands the provider ({@link RecordingSendQueue}). */
    public RecordingSendQueue recordSends(boolean writeAtFirstSge) {
        RecordingSendQueue r = new RecordingSendQueue(this, writeAtFirstSge);
        builder = r;
        return r;
    }

    @Override
    protected void driverModify(QpAttributes attr, QpState current, QpState next) {
        modifies++;
    }

    @Override
    protected boolean driverPostSend(SendWr wr) {
        if (sendsQueued >= capabilities().maxSendWr()) {
            return false;
        }
        sendsQueued++;
        return true;
    }

    @Override
    protected boolean driverPostCommonSend(SendWr wr) {
        boolean queued = driverPostSend(wr);
        if (queued) {
            commonSends++;
        }
        return queued;
    }

    @Override
    protected void driverRingSendDoorbell() {
        sendDoorbells++;
    }

    @Override
    protected boolean driverPostRecv(RecvWr wr) {
        if (recvsQueued >= capabilities().maxRecvWr()) {
            return false;
        }
        recvsQueued++;
        return true;
    }

    @Override
    protected void driverRingRecvDoorbell() {
        recvDoorbells++;
    }

    @Override
    protected void destroy() {
    }

    private final class FakeSendQueue extends SendQueue {
        FakeSendQueue() {
            super(FakeQp.this);
        }

        @Override
        protected void driverStart() {
            batchStart = sendsQueued;
        }

        @Override
        protected boolean driverOpenWr(WrOpcode op, long wrId, int sendFlags, int imm, int rkey, long remoteAddr,
                                       long compareAdd, long swap) {
            return sendsQueued < capabilities().maxSendWr();
        }

        @Override
        protected void driverUdAddr(AddressHandle ah, int remoteQpn, int remoteQkey) {
        }

        @Override
        protected void driverSge(int lkey, long addr, int length) {
        }

        @Override
        protected void driverInline(DirectBuffer src, int offset, int length) {
        }

        @Override
        protected void driverCloseWr() {
            sendsQueued++;
            batchWqes++;
        }

        @Override
        protected void driverComplete() {
            sendDoorbells++;
        }

        @Override
        protected void driverAbort() {
            sendsQueued = batchStart;
        }
    }
}
