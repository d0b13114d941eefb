package io.jhca.verbs.fake;

import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqInitAttributes;

/** The fake device's SRQ: counts what is posted, keeps the armed limit, and grants a resize as asked. */
public final class FakeSrq extends SharedReceiveQueue {
    public int recvsQueued;
    public int armedLimit;

    FakeSrq(ProtectionDomain pd, SrqInitAttributes init, int srqn) {
        super(pd, init.maxWr(), init.maxSge());
        srqn(srqn);
    }

    @Override
    protected boolean driverPostRecv(RecvWr wr) {
        recvsQueued++;
        return true;
    }

    @Override
    protected void driverRingDoorbell() {
    }

    @Override
    protected void driverArmLimit(int limit) {
        armedLimit = limit;
    }

    @Override
    protected int driverQueryLimit() {
        return armedLimit;
    }

    @Override
    protected void driverResize(int maxWr) {
        maxWr(maxWr);
    }

    @Override
    protected void destroy() {
    }
}
