package io.jhca.verbs;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.fake.FakeQp;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** Work-request checks shared by both posting styles; a full queue is a return value. */
class PostingRulesTest extends VerbsTestSupport {
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

    @Test
    void sendsNeedRtsAndReceivesNeedInit() {
        QueuePair qp = track(pd.createQp(QpInitAttributes.rc(cq, cq)));
        SendWr wr = new SendWr().opcode(WrOpcode.SEND).sge(mr, 0, 8);
        RecvWr rwr = new RecvWr().sge(mr, 0, 8);
        refused(VerbsException.EINVAL, "state RESET (needs RTS)", () -> qp.postSend(wr));
        refused(VerbsException.EINVAL, "state RESET (needs INIT", () -> qp.postRecv(rwr));
        refused(VerbsException.EINVAL, "state RESET", () -> qp.sendQueue().start());
        qp.modify(QpAttributes.toInit(1));
        assertEquals(1, qp.postRecv(rwr));
        refused(VerbsException.EINVAL, "state INIT", () -> qp.postSend(wr));
        qp.modify(QpAttributes.toRtr(0x12, 0, AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1), Mtu.MTU_1024));
        refused(VerbsException.EINVAL, "state RTR", () -> qp.postSend(wr));
        qp.modify(QpAttributes.toRts(0));
        assertEquals(1, qp.postSend(wr));
        qp.modify(QpAttributes.toState(QpState.ERR));
        assertEquals(1, qp.postSend(wr), "posting in ERR is allowed: the WR is flushed");
    }

    @Test
    void malformedWorkRequestsAreRefusedWithTheReason() {
        QueuePair rc = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendSge(2).maxInlineData(32));
        SendWr wr = new SendWr(4);
        wr.opcode(WrOpcode.SEND).numSge(3);
        refused(VerbsException.EINVAL, "3 SGEs exceed max_send_sge 2", () -> rc.postSend(wr));
        wr.numSge(1).sge(0).set(mr, 0, 33);
        wr.sendFlags(SendFlags.INLINE);
        refused(VerbsException.EINVAL, "inline data of 33 bytes exceeds max_inline_data 32", () -> rc.postSend(wr));
        wr.opcode(WrOpcode.RDMA_READ);
        refused(VerbsException.EINVAL, "INLINE is not allowed", () -> rc.postSend(wr));
        wr.sendFlags(0).opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).sge(0).set(mr, 0, 4);
        refused(VerbsException.EINVAL, "exactly one 8-byte SGE", () -> rc.postSend(wr));
        wr.sge(0).set(mr, 0, 8);
        wr.atomic(0x1004, 1, 1, 0);
        refused(VerbsException.EINVAL, "not 8-byte aligned", () -> rc.postSend(wr));
        wr.sendFlags(0x100);
        refused(VerbsException.EINVAL, "unknown send flags", () -> rc.postSend(wr));
        // the common WR's short check must refuse what the full one refuses: lengths past 2^31-1 (one SGE of 2^31,
        // unsigned, or two that add up to it), and pass exactly at the limit
        SendWr big = new SendWr(2).opcode(WrOpcode.RDMA_WRITE).numSge(1);
        big.sge(0).set(mr.address(), 0x80000000, mr.lkey());
        refused(VerbsException.EINVAL, "add up to more than 2^31-1", () -> rc.postSend(big));
        big.sge(0).set(mr.address(), -1, mr.lkey());   // 4 GiB - 1, unsigned
        refused(VerbsException.EINVAL, "message of 4294967295 bytes exceeds", () -> rc.postSend(big));
        big.numSge(2).sge(0).set(mr.address(), 0x40000000, mr.lkey());
        big.sge(1).set(mr.address(), 0x40000000, mr.lkey());
        refused(VerbsException.EINVAL, "add up to more than 2^31-1", () -> rc.postSend(big));
        big.opcode(WrOpcode.SEND_WITH_IMM).sendFlags(SendFlags.SOLICITED | SendFlags.FENCE);
        refused(VerbsException.EINVAL, "add up to more than 2^31-1", () -> rc.postSend(big));
        assertEquals(0, ((FakeQp) rc).sendsQueued, "nothing of a refused WR is posted");
        big.sge(1).set(mr.address(), 0x3FFFFFFF, mr.lkey());
        assertEquals(1, rc.postSend(big), "2^31-1 bytes in all is a message");

        QueuePair ud = rtsQp(pd, QpInitAttributes.ud(cq, cq));
        SendWr uwr = new SendWr().opcode(WrOpcode.RDMA_WRITE).sge(mr, 0, 8);
        refused(VerbsException.EINVAL, "not supported on UD", () -> ud.postSend(uwr));
        uwr.opcode(WrOpcode.SEND);
        refused(VerbsException.EINVAL, "no (open) address handle", () -> ud.postSend(uwr));

        QueuePair uc = rtsQp(pd, QpInitAttributes.uc(cq, cq));
        SendWr cwr = new SendWr().opcode(WrOpcode.RDMA_READ).sge(mr, 0, 8);
        refused(VerbsException.EINVAL, "not supported on UC", () -> uc.postSend(cwr));
    }

    @Test
    void theCommonWrFollowsItsOpcodeAndFlagsAsTheyChange() {
        // the check walk reads what the setters kept of opcode and flags: every change must move a WR in or out
        QueuePair rc = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendWr(64).maxInlineData(32));
        QueuePair uc = rtsQp(pd, QpInitAttributes.uc(cq, cq).maxSendWr(64));
        FakeQp frc = (FakeQp) rc;
        FakeQp fuc = (FakeQp) uc;
        SendWr wr = new SendWr().sge(mr, 0, 8);
        assertEquals(1, rc.postSend(wr));
        assertEquals(1, frc.commonSends, "a new WR is a SEND without flags: common");
        wr.opcode(WrOpcode.RDMA_READ);
        assertEquals(1, rc.postSend(wr));
        assertEquals(2, frc.commonSends, "RDMA READ on RC: common");
        refused(VerbsException.EINVAL, "not supported on UC", () -> uc.postSend(wr));
        wr.opcode(WrOpcode.RDMA_WRITE);
        assertEquals(1, uc.postSend(wr));
        assertEquals(1, fuc.commonSends, "READ changed to WRITE: common on UC");
        wr.sendFlags(SendFlags.INLINE | SendFlags.SIGNALED);
        assertEquals(1, rc.postSend(wr));
        assertEquals(2, frc.commonSends, "INLINE: posted, not as the common WR");
        wr.sendFlags(SendFlags.SIGNALED | SendFlags.FENCE | SendFlags.SOLICITED);
        assertEquals(1, rc.postSend(wr));
        assertEquals(3, frc.commonSends, "INLINE cleared: common again");
        wr.opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).atomic(mr.address(), mr.rkey(), 1, 0);
        assertEquals(1, rc.postSend(wr));
        assertEquals(3, frc.commonSends, "an atomic: not common");
        wr.opcode(WrOpcode.SEND_WITH_IMM);
        assertEquals(1, rc.postSend(wr));
        assertEquals(4, frc.commonSends, "the atomic changed to a SEND: common again, its flags kept");
        wr.sendFlags(0x100);
        refused(VerbsException.EINVAL, "unknown send flags", () -> rc.postSend(wr));
        assertEquals(6, frc.sendsQueued, "a refused WR queues nothing");
        assertThrows(NullPointerException.class, () -> wr.opcode(null), "no opcode: refused when set, not at post time");
    }

    @Test
    void aChainWithOneBadWrPostsNothing() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendWr(8).maxSendSge(1));
        SendWr good = new SendWr().opcode(WrOpcode.SEND).sge(mr, 0, 8);
        SendWr bad = new SendWr().opcode(WrOpcode.SEND).numSge(2);
        good.next(bad);
        refused(VerbsException.EINVAL, "2 SGEs exceed max_send_sge 1", () -> qp.postSend(good));
        assertEquals(0, ((FakeQp) qp).sendsQueued, "the good WR before the bad one was not queued either");
        assertEquals(0, ((FakeQp) qp).sendDoorbells);
        RecvWr r1 = new RecvWr().sge(mr, 0, 8);
        RecvWr r2 = new RecvWr().numSge(2);
        r1.next(r2);
        refused(VerbsException.EINVAL, "max_recv_sge", () -> qp.postRecv(r1));
        assertEquals(0, ((FakeQp) qp).recvsQueued);
    }

    @Test
    void aFullQueueIsAReturnValueNotAnException() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendWr(4).maxRecvWr(2));
        SendWr[] chain = new SendWr[6];
        for (int i = 0; i < chain.length; i++) {
            chain[i] = new SendWr().wrId(i).opcode(WrOpcode.SEND).sge(mr, 0, 8);
            if (i > 0) {
                chain[i - 1].next(chain[i]);
            }
        }
        assertEquals(4, qp.postSend(chain[0]), "4 of 6 fit");
        assertEquals(0, qp.postSend(chain[0]));
        assertEquals(1, ((FakeQp) qp).sendDoorbells, "one doorbell for the chain, none when nothing was posted");
        RecvWr r1 = new RecvWr().sge(mr, 0, 8);
        RecvWr r2 = new RecvWr().sge(mr, 8, 8);
        RecvWr r3 = new RecvWr().sge(mr, 16, 8);
        r1.next(r2).next(r3);
        assertEquals(2, qp.postRecv(r1));
    }

    @Test
    void builderChecksLikePostSendAndDropsTheBatchOnMisuse() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendWr(3).maxSendSge(2).maxInlineData(16));
        FakeQp fq = (FakeQp) qp;
        SendQueue sq = qp.sendQueue();
        sq.start();
        sq.wrId(1).flags(SendFlags.SIGNALED).rdmaWrite(mr.rkey(), mr.address()).sge(mr, 0, 8).sge(mr, 8, 8);
        sq.wrId(2).send().inlineData(new UnsafeBuffer(new byte[16]), 0, 16);
        assertEquals(0, sq.complete());
        assertEquals(2, fq.sendsQueued);
        assertEquals(1, fq.sendDoorbells);

        sq.start();
        sq.send().sge(mr, 0, 1).sge(mr, 1, 1);
        refused(VerbsException.EINVAL, "3 SGEs exceed max_send_sge 2", () -> sq.sge(mr, 2, 1));
        assertEquals(2, fq.sendsQueued, "the batch was dropped");
        sq.start();
        refused(VerbsException.EINVAL, "17 bytes exceeds max_inline_data 16",
                () -> sq.send().inlineData(new UnsafeBuffer(new byte[17]), 0, 17));
        sq.start();
        refused(VerbsException.EINVAL, "needs exactly one 8-byte SGE", () -> sq.atomicFetchAdd(mr.rkey(), mr.address(), 1).complete());
        sq.start();
        refused(VerbsException.EINVAL, "sge() without an opcode", () -> sq.sge(mr, 0, 8));
        refused(VerbsException.EINVAL, "before start()", sq::send);
        sq.start();
        refused(VerbsException.EINVAL, "start() twice", sq::start);
        assertEquals(2, fq.sendsQueued);
        assertEquals(1, fq.sendDoorbells);
    }

    @Test
    void builderReportsAFullQueueAtCompleteAndPostsNothingOfTheBatch() {
        QueuePair qp = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendWr(2));
        FakeQp fq = (FakeQp) qp;
        SendQueue sq = qp.sendQueue();
        sq.start();
        for (int i = 0; i < 3; i++) {
            sq.wrId(i).send().sge(mr, 0, 8);
        }
        assertEquals(VerbsException.ENOMEM, sq.complete());
        assertEquals(0, fq.sendsQueued);
        assertEquals(0, fq.sendDoorbells);
        sq.start();
        sq.send().sge(mr, 0, 8);
        assertEquals(0, sq.complete());
        assertEquals(1, fq.sendsQueued);
    }

    @Test
    void udBuilderNeedsAnAddress() {
        QueuePair ud = rtsQp(pd, QpInitAttributes.ud(cq, cq));
        AddressHandle ah = track(pd.createAh(AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1)));
        SendQueue sq = ud.sendQueue();
        sq.start();
        sq.send().sge(mr, 0, 8);
        refused(VerbsException.EINVAL, "without udAddr", sq::complete);
        sq.start();
        sq.send().udAddr(ah, 0x12, 0x11111111).sge(mr, 0, 8);
        assertEquals(0, sq.complete());
        sq.start();
        refused(VerbsException.EINVAL, "not supported on UD", () -> sq.rdmaRead(1, 0));
    }

    @Test
    void ucRefusesAtomicsAsItRefusesReads() {
        // IBTA: a UC QP has no responder resources, so RDMA READ and both atomics are refused at post time
        QueuePair uc = rtsQp(pd, QpInitAttributes.uc(cq, cq));
        SendWr wr = new SendWr().opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).sge(mr, 0, 8).atomic(mr.address(), mr.rkey(), 1, 0);
        refused(VerbsException.EINVAL, "opcode ATOMIC_FETCH_AND_ADD is not supported on UC", () -> uc.postSend(wr));
        wr.opcode(WrOpcode.ATOMIC_CMP_AND_SWP);
        refused(VerbsException.EINVAL, "opcode ATOMIC_CMP_AND_SWP is not supported on UC", () -> uc.postSend(wr));
        assertEquals(0, ((FakeQp) uc).sendsQueued);
        wr.opcode(WrOpcode.RDMA_WRITE);
        assertEquals(1, uc.postSend(wr), "a WRITE with the same SGE and address is fine on UC");
    }

    @Test
    void inlineIsRefusedWithAtomicsAndAllowedUpToMaxInlineData() {
        // ibv_post_send(3): INLINE is for SEND and RDMA WRITE only; max_inline_data bytes is the last legal size
        QueuePair rc = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxInlineData(32));
        SendWr atomic = new SendWr().opcode(WrOpcode.ATOMIC_CMP_AND_SWP).sendFlags(SendFlags.INLINE).sge(mr, 0, 8)
                .atomic(mr.address(), mr.rkey(), 1, 2);
        refused(VerbsException.EINVAL, "INLINE is not allowed with ATOMIC_CMP_AND_SWP", () -> rc.postSend(atomic));
        atomic.opcode(WrOpcode.ATOMIC_FETCH_AND_ADD);
        refused(VerbsException.EINVAL, "INLINE is not allowed with ATOMIC_FETCH_AND_ADD", () -> rc.postSend(atomic));
        assertEquals(0, ((FakeQp) rc).sendsQueued);
        SendWr inline = new SendWr().opcode(WrOpcode.SEND).sendFlags(SendFlags.INLINE).sge(mr, 0, 32);
        assertEquals(1, rc.postSend(inline), "exactly max_inline_data bytes");
        inline.sge(0).set(mr, 0, 33);
        refused(VerbsException.EINVAL, "inline data of 33 bytes exceeds max_inline_data 32", () -> rc.postSend(inline));
    }

    @Test
    void anAtomicTakesOneSgeEvenIfTheFirstIsEightBytes() {
        // ibv_post_send(3): an atomic WR has exactly one 8-byte SGE; a second one is not ignored but refused
        QueuePair rc = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendSge(2));
        SendWr wr = new SendWr(2).opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).atomic(mr.address(), mr.rkey(), 1, 0);
        wr.numSge(2).sge(0).set(mr, 0, 8);
        wr.sge(1).set(mr, 8, 8);
        refused(VerbsException.EINVAL, "ATOMIC_FETCH_AND_ADD needs exactly one 8-byte SGE", () -> rc.postSend(wr));
        assertEquals(0, ((FakeQp) rc).sendsQueued);
        wr.numSge(1);
        assertEquals(1, rc.postSend(wr));
    }

    @Test
    void receiveLengthsMayAddUpToExactly2To31Minus1() {
        // the receive side has the send side's bound: 2^31-1 bytes in all is legal, one byte more is refused
        QueuePair qp = track(pd.createQp(QpInitAttributes.rc(cq, cq).maxRecvSge(2)));
        qp.modify(QpAttributes.toInit(1));
        RecvWr rwr = new RecvWr(2).numSge(2);
        rwr.sge(0).set(mr.address(), 0x40000000, mr.lkey());
        rwr.sge(1).set(mr.address(), 0x3FFFFFFF, mr.lkey());
        assertEquals(1, qp.postRecv(rwr), "2^31-1 bytes in all");
        rwr.sge(1).set(mr.address(), 0x40000000, mr.lkey());
        refused(VerbsException.EINVAL, "SGE lengths add up to more than 2^31-1", () -> qp.postRecv(rwr));
        assertEquals(1, ((FakeQp) qp).recvsQueued);
    }

    @Test
    void udBuilderRefusesAnAddressHandleOfAnotherPd() {
        // like postSend's UD check: the AH must be of the QP's PD; the builder drops the batch
        QueuePair ud = rtsQp(pd, QpInitAttributes.ud(cq, cq));
        ProtectionDomain other = track(ctx.allocatePd());
        AddressHandle foreign = track(other.createAh(AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1)));
        SendQueue sq = ud.sendQueue();
        sq.start();
        refused(VerbsException.EINVAL, "of another PD (batch dropped)", () -> sq.send().udAddr(foreign, 0x12, 0x11111111));
        assertEquals(0, sq.start().complete(), "the dropped batch left the builder free");
        assertEquals(0, ((FakeQp) ud).sendsQueued);
    }

    @Test
    void udPostRefusesAnAddressHandleOfAnotherPd() {
        // ibv_post_send(3): a UD WR's AH must be of the QP's PD, as the builder's udAddr requires
        QueuePair ud = rtsQp(pd, QpInitAttributes.ud(cq, cq));
        ProtectionDomain other = track(ctx.allocatePd());
        AddressHandle own = track(pd.createAh(AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1)));
        AddressHandle foreign = track(other.createAh(AhAttributes.to(ctx.queryGid(1, 1)).sgidIndex(1)));
        SendWr wr = new SendWr().opcode(WrOpcode.SEND).sge(mr, 0, 8).ud(foreign, 0x12, 0x11111111);
        refused(VerbsException.EINVAL, "address handle of another PD", () -> ud.postSend(wr));
        assertEquals(0, ((FakeQp) ud).sendsQueued);
        wr.ud(own, 0x12, 0x11111111);
        assertEquals(1, ud.postSend(wr));
    }

    @Test
    void builderRefusesUnknownSendFlags() {
        // SendFlags.ALL is the last legal mask, like postSend's check; a bit beyond it drops the batch
        QueuePair rc = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxInlineData(32));
        SendQueue sq = rc.sendQueue();
        sq.start();
        sq.flags(SendFlags.ALL);
        refused(VerbsException.EINVAL, "unknown send flags 0x" + Integer.toHexString(SendFlags.ALL + 1),
                () -> sq.flags(SendFlags.ALL + 1));
        assertEquals(0, sq.start().complete(), "the dropped batch left the builder free");
    }

    @Test
    void sendWithInvalidateIsRcOnlyInTheBuilder() {
        // ibv_post_send(3): SEND_WITH_INV is RC only; UC has LOCAL_INV and BIND_MW but not this one
        QueuePair uc = rtsQp(pd, QpInitAttributes.uc(cq, cq));
        SendQueue sq = uc.sendQueue();
        sq.start();
        refused(VerbsException.EINVAL, "opcode SEND_WITH_INV is not supported on UC", () -> sq.sendInv(0x100));
        assertEquals(0, ((FakeQp) uc).sendsQueued);
    }

    @Test
    void multicastIsForUdQpsAndMlidsUpTo0xffff() {
        // ibv_attach_mcast(3): UD QPs only, a 16-bit MLID; the fake provider then refuses (it has no multicast)
        QueuePair ud = rtsQp(pd, QpInitAttributes.ud(cq, cq));
        QueuePair rc = track(pd.createQp(QpInitAttributes.rc(cq, cq)));
        Gid mgid = Gid.parse("00000000000000000000ffffe0000001");   // 224.0.0.1
        refused(VerbsException.EINVAL, "only UD QPs join multicast groups, this one is RC", () -> rc.attachMcast(mgid, 0));
        refused(VerbsException.EOPNOTSUPP, "the provider has no multicast", () -> ud.attachMcast(mgid, 0xFFFF));
        refused(VerbsException.EINVAL, "mlid 65536 out of range 0..0xffff", () -> ud.attachMcast(mgid, 0x10000));
    }

    @Test
    void builderKeepsInlineDataAndSgesApartAndAtomicsToOneEightByteSge() {
        // a WR's payload is inline or gathered, never both; an atomic's one SGE is exactly 8 bytes, never inline
        QueuePair rc = rtsQp(pd, QpInitAttributes.rc(cq, cq).maxSendSge(2).maxInlineData(32));
        SendQueue sq = rc.sendQueue();
        UnsafeBuffer src = new UnsafeBuffer(new byte[8]);
        sq.start();
        refused(VerbsException.EINVAL, "inline data after SGEs in one WR", () -> sq.send().sge(mr, 0, 8).inlineData(src, 0, 8));
        sq.start();
        refused(VerbsException.EINVAL, "inline data with ATOMIC_FETCH_AND_ADD",
                () -> sq.atomicFetchAdd(mr.rkey(), mr.address(), 1).inlineData(src, 0, 8));
        sq.start();
        refused(VerbsException.EINVAL, "ATOMIC_CMP_AND_SWP needs exactly one 8-byte SGE",
                () -> sq.atomicCmpSwp(mr.rkey(), mr.address(), 1, 2).sge(mr, 0, 4));
        assertEquals(0, ((FakeQp) rc).sendsQueued, "every batch was dropped");
        sq.start();
        sq.atomicCmpSwp(mr.rkey(), mr.address(), 1, 2).sge(mr, 0, 8);
        sq.send().inlineData(src, 0, 8);
        assertEquals(0, sq.complete());
        assertEquals(2, ((FakeQp) rc).sendsQueued);
    }
}
