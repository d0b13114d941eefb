package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.fake.FakeQp;

/**
 * MwRules.checkPost, the post-time bind checks every provider shares, on the fake device: it offers no windows, so
 * the windows here are made by the test (the rules read only their PD, type, rkey and open state).
 */
class MwPostRulesTest extends VerbsTestSupport {
    private ProtectionDomain pd;
    private QueuePair qp;
    private MemoryRegion mr;
    private MemoryWindow mw;
    private final int rw = Access.mask(Access.REMOTE_WRITE, Access.REMOTE_READ);

    @BeforeEach
    void resources() {
        pd = track(ctx.allocatePd());
        CompletionQueue cq = track(ctx.createCq(16));
        qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendSge(2));
        DmaRegion mem = memory(8192);
        mr = track(pd.register(mem, 0, 8192, Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE, Access.MW_BIND)));
        mw = track(window(pd, MwType.TYPE_1));
    }

    private static MemoryWindow window(ProtectionDomain pd, MwType type) {
        return new MemoryWindow(pd, type, 0x300) {
            @Override
            protected void destroy() {
            }
        };
    }

    private void check(MemoryWindow w, MwBind bind) {
        MwRules.checkPost(qp, w, bind, MwType.TYPE_1);
    }

    @Test
    void anUnbindNamesNoSpan() {
        // ibv_bind_mw(3): an unbind (no MR) with an address or a length is EINVAL, not a silent unbind
        check(mw, new MwBind());
        refused(VerbsException.EINVAL, "no MR, yet address 0x0 length 1", () -> check(mw, new MwBind().set(null, 0, 1, 0)));
        refused(VerbsException.EINVAL, "no MR, yet address 0x1000 length 0", () -> check(mw, new MwBind().set(null, 0x1000, 0, 0)));
    }

    @Test
    void theMrMustBeOfTheWindowsPd() {
        // rdma-core mlx5 set_bind_wr: an MR of another PD is EPERM (not EINVAL)
        ProtectionDomain other = track(ctx.allocatePd());
        MemoryRegion foreign = track(other.register(memory(4096), 0, 4096, Access.mask(Access.LOCAL_WRITE, Access.MW_BIND)));
        check(mw, new MwBind().set(mr, mr.address(), 4096, rw));
        refused(VerbsException.EPERM, "are of different PDs",
                () -> check(mw, new MwBind().set(foreign, foreign.address(), 4096, rw)));
    }

    @Test
    void aWindowOfAnotherDeviceIsRefused() {
        // the QP's device cannot bind a window another device allocated, even on an otherwise legal bind
        try (Context otherCtx = Verbs.open("fake0")) {
            ProtectionDomain otherPd = otherCtx.allocatePd();
            MemoryWindow foreign = window(otherPd, MwType.TYPE_1);
            try {
                refused(VerbsException.EINVAL, "belongs to another device", () -> check(foreign, new MwBind()));
            } finally {
                foreign.close();
                otherPd.close();
            }
        }
    }

    @Test
    void accessBitsBeyondTheKnownOnesAreRefused() {
        // Access.ALL (0x1f) is the last legal mask; 0x20 would be ZERO_BASED, which no provider here supports
        check(mw, new MwBind().set(mr, mr.address(), 64, Access.ALL));
        refused(VerbsException.EINVAL, "unknown access bits 0x20",
                () -> check(mw, new MwBind().set(mr, mr.address(), 64, Access.ALL | 0x20)));
    }

    @Test
    void aNegativeLengthIsNamedAsSuch() {
        // a length is a long here (a u64 in libibverbs): a negative one is refused by name, before the span check
        check(mw, new MwBind().set(mr, mr.address(), 0, rw));
        refused(VerbsException.EINVAL, "negative length -1", () -> check(mw, new MwBind().set(mr, mr.address(), -1, rw)));
    }

    @Test
    void aType2WindowStillBoundToAQpIsNotFree() {
        // o10-37.2.30: a type 2 bind needs the window free and no longer bound to a QP, either alone refuses it
        long start = mr.address();
        assertNull(MwRules.bindError(MwType.TYPE_2, MwState.FREE, false, pd, pd, mr, start, 64, rw));
        assertTrue(MwRules.bindError(MwType.TYPE_2, MwState.FREE, true, pd, pd, mr, start, 64, rw).contains("free state"));
    }

    @Test
    void aBindMwWrMayChangeOnlyTheKeyByteAndTakesNoSges() {
        // IBTA 10.6.7.2: the new rkey keeps the window's index (bits 31:8); a bind names its span in the bind, not SGEs
        MemoryWindow mw2 = track(window(pd, MwType.TYPE_2));
        MwBind bind = new MwBind().set(mr, mr.address(), 64, rw);
        SendWr wr = new SendWr(1).opcode(WrOpcode.BIND_MW).bindMw(mw2, 0x400, bind);
        refused(VerbsException.EINVAL, "rkey 0x400 is not of MW type 2 rkey=0x300", () -> qp.postSend(wr));
        wr.bindMw(mw2, 0x3ff, bind).numSge(1).sge(0).set(mr, 0, 8);
        refused(VerbsException.EINVAL, "BIND_MW on " + qp.describe() + ": takes no SGEs", () -> qp.postSend(wr));
        assertEquals(0, ((FakeQp) qp).sendsQueued);
        wr.numSge(0);
        assertEquals(1, qp.postSend(wr), "0x3ff: only the key byte changed");
    }

    @Test
    void theBuildersBindMwMayChangeOnlyTheKeyByte() {
        // as for a BIND_MW WR; a legal rkey reaches the provider (the fake one cannot bind, so it refuses there)
        MemoryWindow mw2 = track(window(pd, MwType.TYPE_2));
        MwBind bind = new MwBind().set(mr, mr.address(), 64, rw);
        SendQueue sq = qp.sendQueue();
        sq.start();
        refused(VerbsException.EINVAL, "bindMw rkey 0x200 is not of MW type 2 rkey=0x300", () -> sq.bindMw(mw2, 0x200, bind));
        sq.start();
        refused(VerbsException.EOPNOTSUPP, "not implemented by this provider", () -> sq.bindMw(mw2, 0x3ff, bind));
        assertEquals(0, ((FakeQp) qp).sendsQueued);
    }
}
