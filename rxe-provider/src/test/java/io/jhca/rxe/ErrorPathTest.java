package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.rxe.transport.RxeCounters;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.Gid;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/** Error completions, the state they leave the QPs in, and flushing. */
class ErrorPathTest {

    private static Rig rig() {
        return Rig.rc(ProgressMode.THREAD, 1 << 20, Mtu.MTU_1024);
    }

    private static SendWr write(final long id, final MemoryRegion local, final int length, final long raddr, final int rkey) {
        return new SendWr().wrId(id).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED).sge(local, 0, length)
                .rdma(raddr, rkey);
    }

    /** The QP went to ERR and the WR posted behind the failed one was flushed. */
    private static void expectFlushedAfter(final Rig r, final QueuePair qp, final CompletionQueue cq, final long id) {
        r.expect(cq, id, WcStatus.WR_FLUSH_ERR);
        assertEquals(QpState.ERR, qp.state());
    }

    @Test
    void badLkeyIsLocalProtectionError() {
        try (Rig r = rig()) {
            final SendWr wr = new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED);
            wr.numSge(1).sge(0).set(r.mrA.address(), 64, r.mrA.lkey() ^ 0x01); // another tag: a stale key
            r.qpA.postSend(wr.next(new SendWr().wrId(2).opcode(WrOpcode.SEND).sge(r.mrA, 0, 8)));
            r.expect(r.cqA, 1, WcStatus.LOC_PROT_ERR);
            expectFlushedAfter(r, r.qpA, r.cqA, 2);
            assertEquals(0, r.b.counters().get(RxeCounters.Counter.RCVD_PKTS), "nothing went on the wire");
        }
    }

    @Test
    void localSgeOutOfBoundsIsLocalProtectionError() {
        try (Rig r = rig()) {
            final SendWr wr = new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED);
            wr.numSge(1).sge(0).set(r.mrA.address() + r.mrA.length() - 10, 64, r.mrA.lkey());
            r.qpA.postSend(wr);
            r.expect(r.cqA, 1, WcStatus.LOC_PROT_ERR);
        }
    }

    @Test
    void readIntoMemoryWithoutLocalWriteIsLocalProtectionError() {
        try (Rig r = rig(); DmaRegion ro = DmaMemory.allocate(DmaOptions.of(4096).lock(false));
             MemoryRegion mr = r.pdA.register(ro, 0, 4096, Access.REMOTE_READ.bit())) {
            final SendWr wr = new SendWr().wrId(1).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                    .sge(mr, 0, 64).rdma(r.mrB.address(), r.mrB.rkey());
            r.qpA.postSend(wr);
            r.expect(r.cqA, 1, WcStatus.LOC_PROT_ERR);
        }
    }

    @Test
    void badRkeyIsRemoteAccessErrorAndBothQpsFail() {
        try (Rig r = rig()) {
            r.qpB.postRecv(new RecvWr().wrId(50).sge(r.mrB, 0, 64));
            r.qpA.postSend(write(1, r.mrA, 64, r.mrB.address(), r.mrB.rkey() ^ 0x01)
                    .next(write(2, r.mrA, 8, r.mrB.address(), r.mrB.rkey())));
            r.expect(r.cqA, 1, WcStatus.REM_ACCESS_ERR);
            expectFlushedAfter(r, r.qpA, r.cqA, 2);
            // the responder went to ERR too (class A): its receive WQE is flushed, an async event says why
            r.expect(r.cqB, 50, WcStatus.WR_FLUSH_ERR);
            assertEquals(QpState.ERR, r.qpB.state());
            final AsyncEvent ev = r.b.pollAsyncEvent();
            assertEquals(AsyncEvent.Type.QP_ACCESS_ERR, ev.type());
        }
    }

    @Test
    void writeBeyondTheRegionIsRemoteAccessError() {
        try (Rig r = rig()) {
            r.qpA.postSend(write(1, r.mrA, 64, r.mrB.address() + r.mrB.length() - 32, r.mrB.rkey()));
            r.expect(r.cqA, 1, WcStatus.REM_ACCESS_ERR);
        }
    }

    @Test
    void writeToMemoryRegisteredWithoutRemoteWriteIsRemoteAccessError() {
        try (Rig r = rig(); DmaRegion m = DmaMemory.allocate(DmaOptions.of(4096).lock(false));
             MemoryRegion readOnly = r.pdB.register(m, 0, 4096, Access.REMOTE_READ.bit())) {
            r.qpA.postSend(write(1, r.mrA, 64, readOnly.address(), readOnly.rkey()));
            r.expect(r.cqA, 1, WcStatus.REM_ACCESS_ERR);
        }
    }

    @Test
    void memoryOfAnotherPdIsRemoteAccessError() {
        try (Rig r = rig(); var otherPd = r.b.allocatePd(); DmaRegion m = DmaMemory.allocate(DmaOptions.of(4096).lock(false));
             MemoryRegion other = otherPd.register(m, 0, 4096, Rig.ALL_ACCESS)) {
            r.qpA.postSend(write(1, r.mrA, 64, other.address(), other.rkey()));
            r.expect(r.cqA, 1, WcStatus.REM_ACCESS_ERR);
        }
    }

    @Test
    void qpWithoutRemoteWriteAccessAnswersInvalidRequest() {
        try (Rig r = rig()) {
            // a fresh pair whose responder grants no remote access (rc_pingpong's INIT access flags 0)
            try (QueuePair a = r.pdA.createQp(QpInitAttributes.rc(r.cqA, r.cqA));
                 QueuePair b = r.pdB.createQp(QpInitAttributes.rc(r.cqB, r.cqB))) {
                connect(a, r.a, b, r.b, 0, 7, 7, 10);
                connect(b, r.b, a, r.a, 0, 7, 7, 10);
                a.postSend(write(1, r.mrA, 64, r.mrB.address(), r.mrB.rkey()));
                r.expect(r.cqA, 1, WcStatus.REM_INV_REQ_ERR);
                assertEquals(QpState.ERR, a.state());
            }
        }
    }

    @Test
    void receiveBufferTooSmall() {
        try (Rig r = rig()) {
            r.qpB.postRecv(new RecvWr().wrId(50).sge(r.mrB, 0, 100));
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 3000));
            r.expect(r.cqA, 1, WcStatus.REM_INV_REQ_ERR);
            r.expect(r.cqB, 50, WcStatus.LOC_LEN_ERR);
            assertEquals(QpState.ERR, r.qpB.state());
        }
    }

    @Test
    void receiveBufferExactlyFullIsEnoughOneByteLessIsNot() {
        try (Rig r = rig()) {
            r.qpB.postRecv(new RecvWr().wrId(50).sge(r.mrB, 0, 3000));
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 3000));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            assertEquals(3000, r.expect(r.cqB, 50, WcStatus.SUCCESS).byteLen());
            r.qpB.postRecv(new RecvWr().wrId(51).sge(r.mrB, 0, 2999));
            r.qpA.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 3000));
            r.expect(r.cqA, 2, WcStatus.REM_INV_REQ_ERR);
            r.expect(r.cqB, 51, WcStatus.LOC_LEN_ERR);
        }
    }

    @Test
    void rnrRetryExhausted() {
        try (Rig r = rig();
             QueuePair a = r.pdA.createQp(QpInitAttributes.rc(r.cqA, r.cqA));
             QueuePair b = r.pdB.createQp(QpInitAttributes.rc(r.cqB, r.cqB))) {
            connect(a, r.a, b, r.b, Rig.ALL_ACCESS, 7, 2, 10);
            connect(b, r.b, a, r.a, Rig.ALL_ACCESS, 7, 2, 10);
            // no receive posted at B: every SEND draws an RNR NAK (min_rnr_timer 1 = 10 us); 2 retries, then error
            a.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 64));
            r.expect(r.cqA, 1, WcStatus.RNR_RETRY_EXC_ERR);
            assertEquals(3, r.a.counters().get(RxeCounters.Counter.RCVD_RNR_ERR), "first try + 2 retries");
            // B answers every copy of the SEND it gets: at least those 3, more if A's retransmit timer (4 ms) fired
            // while an RNR NAK was on its way (a loaded machine); never more than A sent
            final long nakked = r.b.counters().get(RxeCounters.Counter.SEND_RNR_ERR);
            final long sent = r.a.counters().get(RxeCounters.Counter.SENT_PKTS);
            assertTrue(nakked >= 3 && nakked <= sent, () -> "RNR NAKs sent " + nakked + ", SENDs sent " + sent);
            assertEquals(QpState.RTS, b.state(), "an RNR NAK does not hurt the responder");
        }
    }

    @Test
    void rnrThenReceivePostedSucceeds() {
        try (Rig r = rig()) {
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 2000));
            final long end = System.nanoTime() + 5_000_000_000L;
            while (r.b.counters().get(RxeCounters.Counter.SEND_RNR_ERR) == 0) {
                assertTrue(System.nanoTime() < end, "no RNR NAK seen");
                Thread.onSpinWait();
            }
            r.qpB.postRecv(new RecvWr().wrId(50).sge(r.mrB, 0, 4096));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            assertEquals(2000, r.expect(r.cqB, 50, WcStatus.SUCCESS).byteLen());
        }
    }

    @Test
    void vanishedPeerExhaustsRetries() {
        try (Rig r = rig(); QueuePair a = r.pdA.createQp(QpInitAttributes.rc(r.cqA, r.cqA))) {
            // the peer is an address where nothing listens; timeout 4 = 65 us, retry_cnt 2
            a.modify(QpAttributes.toInit(1));
            final Gid nobody = Gid.parse("0000:0000:0000:0000:0000:ffff:7f0b:fffe"); // ::ffff:127.11.255.254
            a.modify(QpAttributes.toRtr(0x77, 0, AhAttributes.to(nobody).sgidIndex(1), Mtu.MTU_1024));
            a.modify(QpAttributes.toRts(0).timeout(4).retryCnt(2));
            a.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 64));
            r.expect(r.cqA, 1, WcStatus.RETRY_EXC_ERR);
            assertEquals(1, r.a.counters().get(RxeCounters.Counter.RETRY_EXCEEDED_ERR));
            assertEquals(3, r.a.counters().get(RxeCounters.Counter.SENT_PKTS), "first try + 2 retries");
            assertEquals(QpState.ERR, a.state());
        }
    }

    @Test
    void postingInTheWrongState() {
        try (Rig r = rig(); QueuePair q = r.pdA.createQp(QpInitAttributes.rc(r.cqA, r.cqA))) {
            final VerbsException recv = assertThrows(VerbsException.class,
                    () -> q.postRecv(new RecvWr().wrId(1).sge(r.mrA, 0, 8)));
            assertEquals(VerbsException.EINVAL, recv.errno());
            q.modify(QpAttributes.toInit(1));
            final VerbsException send = assertThrows(VerbsException.class,
                    () -> q.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sge(r.mrA, 0, 8)));
            assertEquals(VerbsException.EINVAL, send.errno());
            assertThrows(VerbsException.class, () -> q.sendQueue().start());
            assertEquals(1, q.postRecv(new RecvWr().wrId(1).sge(r.mrA, 0, 8)), "INIT takes receives");
            // modify to ERR flushes what is queued, and what is posted afterwards
            q.modify(QpAttributes.toState(QpState.ERR));
            r.expect(r.cqA, 1, WcStatus.WR_FLUSH_ERR);
            q.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sge(r.mrA, 0, 8)); // unsignaled: flushed anyway
            r.expect(r.cqA, 2, WcStatus.WR_FLUSH_ERR);
            q.postRecv(new RecvWr().wrId(3).sge(r.mrA, 0, 8));
            r.expect(r.cqA, 3, WcStatus.WR_FLUSH_ERR);
            // RESET empties the queues without completions; the QP can be brought up again
            q.modify(QpAttributes.toState(QpState.RESET));
            q.modify(QpAttributes.toInit(1));
            q.postRecv(new RecvWr().wrId(4).sge(r.mrA, 0, 8));
            q.modify(QpAttributes.toState(QpState.RESET));
            r.expectNothing(r.cqA, 50);
        }
    }

    @Test
    void unsignaledSendsCompleteSilentlyUnlessSqSigAll() {
        try (Rig r = rig()) {
            for (int i = 0; i < 3; i++) {
                r.qpB.postRecv(new RecvWr().wrId(50 + i).sge(r.mrB, 0, 64));
            }
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sge(r.mrA, 0, 8)
                    .next(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 8)));
            r.expect(r.cqA, 2, WcStatus.SUCCESS);
            r.expect(r.cqB, 50, WcStatus.SUCCESS);
            r.expect(r.cqB, 51, WcStatus.SUCCESS);
            r.expectNothing(r.cqA, 20);
        }
        try (Rig r = new Rig(Rig.config("sigA", ProgressMode.THREAD).build(), Rig.config("sigB", ProgressMode.THREAD).build(),
                io.jhca.verbs.QpType.RC, 1 << 16, Mtu.MTU_1024, i -> i.sqSigAll(true))) {
            r.qpB.postRecv(new RecvWr().wrId(50).sge(r.mrB, 0, 64));
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.SEND).sge(r.mrA, 0, 8));
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
        }
    }

    @Test
    void cqOverrunIsReportedNotLost() {
        try (Rig r = rig(); CompletionQueue small = r.a.createCq(4);
             QueuePair a = r.pdA.createQp(QpInitAttributes.rc(small, small).maxSendWr(16));
             QueuePair b = r.pdB.createQp(QpInitAttributes.rc(r.cqB, r.cqB).maxRecvWr(16))) {
            connect(a, r.a, b, r.b, Rig.ALL_ACCESS, 7, 7, 10);
            connect(b, r.b, a, r.a, Rig.ALL_ACCESS, 7, 7, 10);
            assertEquals(4, small.capacity());
            for (int i = 0; i < 6; i++) {
                a.postSend(write(i, r.mrA, 8, r.mrB.address(), r.mrB.rkey()));
            }
            // Nothing is polled until the CQ_ERR event arrives: it is raised when the 5th completion finds the
            // ring full, not at the next poll, so waiting for it cannot race with consumption.
            final long end = System.nanoTime() + 10_000_000_000L;
            AsyncEvent event = null;
            while (event == null && System.nanoTime() < end) {
                event = r.a.pollAsyncEvent();
                Thread.onSpinWait();
            }
            assertTrue(event != null, "CQ_ERR was raised when the CQ overran");
            assertEquals(AsyncEvent.Type.CQ_ERR, event.type());
            final WorkCompletion wc = new WorkCompletion();
            final VerbsException overrun = assertThrows(VerbsException.class, () -> small.poll(wc),
                    "the overrun is reported, not lost");
            assertEquals(VerbsException.EOVERFLOW, overrun.errno());
            assertThrows(VerbsException.class, () -> small.poll(wc), "and stays reported");
            assertEquals(null, r.a.pollAsyncEvent(), "one event per overrun");
        }
    }

    /** RESET to RTS with the given responder access, rnr_retry and timeout; min_rnr_timer 1 (10 us). */
    static void connect(final QueuePair qp, final RxeContext local, final QueuePair peer, final RxeContext remote,
            final int access, final int retryCnt, final int rnrRetry, final int timeout) {
        qp.modify(QpAttributes.toInit(1).accessFlags(access));
        qp.modify(QpAttributes.toRtr(peer.qpn(), 0, AhAttributes.to(Rig.gid(remote)).sgidIndex(1), Mtu.MTU_1024)
                .minRnrTimer(1).maxDestRdAtomic(4));
        qp.modify(QpAttributes.toRts(0).timeout(timeout).retryCnt(retryCnt).rnrRetry(rnrRetry).maxRdAtomic(4));
    }
}
