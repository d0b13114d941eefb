package io.jhca.verbs;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.fake.FakeQp;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The send builder's limits: each misuse is a clear exception that drops the batch and leaves the queue ready
 * for the next one (checked by posting a good batch right after).
 */
class BuilderLimitsTest extends VerbsTestSupport {
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private MemoryRegion mr;

    @BeforeEach
    void resources() {
        pd = track(ctx.allocatePd());
        cq = track(ctx.createCq(64));
        DmaRegion mem = memory(65536);
        mr = track(pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_WRITE));
    }

    /** A good one-WR batch goes through: the queue took the misuse without being left in a batch. */
    private void assertUsable(QueuePair qp) {
        FakeQp fq = (FakeQp) qp;
        int before = fq.sendsQueued;
        SendQueue sq = qp.sendQueue();
        sq.start();
        sq.wrId(9).flags(0).send().sge(mr, 0, 8);
        assertEquals(0, sq.complete());
        assertEquals(before + 1, fq.sendsQueued);
    }

    @Test
    void aMessageOverTheMaxMessageSizeIsRefused() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendSge(4));
        long max = ctx.queryPort(1).maxMsgSz();
        assertEquals(1L << 31, max, "the fake port's max_msg_sz, the IBTA limit");
        assertEquals(max, qp.maxMessageSize());
        SendQueue sq = qp.sendQueue();
        // two SGEs of 2^30 + 1 bytes: 2^31 + 2 bytes in one message
        sq.start();
        sq.rdmaWrite(mr.rkey(), mr.address()).sge(mr.lkey(), mr.address(), (1 << 30) + 1);
        refused(VerbsException.EINVAL, "message of 2147483650 bytes exceeds the port's max_msg_sz 2147483648",
                () -> sq.sge(mr.lkey(), mr.address(), (1 << 30) + 1));
        assertUsable(qp);
        // an SGE length is unsigned: -1 is 4 GiB - 1 bytes
        sq.start();
        refused(VerbsException.EINVAL, "message of 4294967295 bytes exceeds", () -> sq.send().sge(mr.lkey(), mr.address(), -1));
        assertUsable(qp);
        // exactly 2^31 is within max_msg_sz but not within the 32-bit lengths the providers carry
        sq.start();
        refused(VerbsException.EINVAL, "more than 2^31-1", () -> sq.send().sge(mr.lkey(), mr.address(), 1 << 30)
                .sge(mr.lkey(), mr.address(), 1 << 30));
        assertUsable(qp);
        // one SGE: 2^31-1 bytes is the last length taken, 2^31 (negative as an int) the first refused
        sq.start();
        sq.send().sge(mr.lkey(), mr.address(), Integer.MAX_VALUE);
        assertEquals(0, sq.complete());
        sq.start();
        refused(VerbsException.EINVAL, "more than 2^31-1", () -> sq.send().sge(mr.lkey(), mr.address(), 1 << 31));
        assertUsable(qp);
    }

    @Test
    void aQpWithoutSgesRefusesTheCommonWrsFirstSge() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendSge(0));
        assertEquals(0, qp.capabilities().maxSendSge(), "the fake grants max_send_sge 0 as asked");
        SendQueue sq = qp.sendQueue();
        // the common WR's first SGE takes a short way; with max_send_sge 0 it must not
        sq.start();
        refused(VerbsException.EINVAL, "1 SGEs exceed max_send_sge 0", () -> sq.rdmaWrite(mr.rkey(), mr.address())
                .sge(mr.lkey(), mr.address(), 0));
        // a WR without SGEs is a message of 0 bytes
        FakeQp fq = (FakeQp) qp;
        sq.start();
        sq.wrId(5).flags(0).rdmaWrite(mr.rkey(), mr.address());
        assertEquals(0, sq.complete());
        assertEquals(1, fq.sendsQueued);
    }

    @Test
    void completeAfterTheQpClosedThrowsAndDropsTheBatch() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq));
        SendQueue sq = qp.sendQueue();
        sq.start();
        sq.wrId(1).send().sge(mr, 0, 8);
        qp.close();
        refused(VerbsException.EINVAL, "was closed during the batch", sq::complete);
        assertEquals(0, ((FakeQp) qp).sendDoorbells, "nothing rang for a closed QP");
        // the batch is gone: the next call is about the closed QP, not about a batch left open
        refused(VerbsException.EINVAL, "is closed", sq::start);
        refused(VerbsException.EINVAL, "complete() without start()", sq::complete);
    }

    @Test
    void anOpcodeAfterTheQpClosedThrowsAndDropsTheBatch() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq));
        SendQueue sq = qp.sendQueue();
        sq.start();
        qp.close();
        refused(VerbsException.EINVAL, "was closed during the batch", sq::send);
        refused(VerbsException.EINVAL, "is closed", sq::start);
    }

    @Test
    void inlineDataOutsideItsSourceBufferIsRefusedAndTheQueueStaysUsable() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxInlineData(64));
        SendQueue sq = qp.sendQueue();
        UnsafeBuffer src = new UnsafeBuffer(new byte[16]);
        sq.start();
        refused(VerbsException.EINVAL, "inline data [offset 8, length 16) outside the source buffer of 16 bytes",
                () -> sq.send().inlineData(src, 8, 16));
        assertUsable(qp);
        sq.start();
        refused(VerbsException.EINVAL, "[offset 0, length -1)", () -> sq.send().inlineData(src, 0, -1));
        assertUsable(qp);
        sq.start();
        refused(VerbsException.EINVAL, "[offset -1, length 4)", () -> sq.send().inlineData(src, -1, 4));
        assertUsable(qp);
        sq.start();
        refused(VerbsException.EINVAL, "null buffer", () -> sq.send().inlineData(null, 0, 4));
        assertUsable(qp);
    }

    @Test
    void postSendRefusesAMessageOverTheMaxMessageSize() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendSge(4));
        SendWr wr = new SendWr(4).opcode(WrOpcode.SEND).numSge(2);
        wr.sge(0).set(mr.address(), (1 << 30) + 1, mr.lkey());
        wr.sge(1).set(mr.address(), (1 << 30) + 1, mr.lkey());
        refused(VerbsException.EINVAL, "exceeds the port's max_msg_sz 2147483648", () -> qp.postSend(wr));
    }
}
