package io.jhca.tests.srq;

import io.jhca.memory.DmaRegion;
import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.DevicePairs;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Seeds;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.Access;
import io.jhca.verbs.AddressHandle;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.Context;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.SharedReceiveQueue;
import io.jhca.verbs.SrqAttributes;
import io.jhca.verbs.SrqInitAttributes;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Shared receive queues ({@code ibv_create_srq}, {@code ibv_post_srq_recv}, {@code ibv_modify_srq},
 * {@code ibv_query_srq}) on every device pair: RC and UD QPs of one SRQ take its WQEs in posting order, content
 * checked; the limit event comes exactly when the count of posted WQEs drops below the limit, once; a QP of the SRQ
 * in the error state reports its last WQE; the verbs rules refuse what verbs refuses.
 */
class SharedReceiveQueueTest {
    private static final Duration QUIET = Duration.ofMillis(200);
    /** Bytes of one SRQ receive buffer. */
    private static final int SLOT = 4096;
    /** The GRH area in front of every UD receive. */
    private static final int GRH = 40;

    /** Every pair, with the SRQ on side B and on side A (so a mixed pair has it on each kind of device). */
    static Stream<Arguments> sides() {
        return DevicePairs.cross(Boolean.FALSE, Boolean.TRUE);
    }

    @ParameterizedTest(name = "{0} SRQ on A: {1}")
    @MethodSource("sides")
    void rcAndUdQpsShareOnePool(DevicePair pair, boolean srqOnA) {
        try (Harness h = Harness.open(pair)) {
            Side s = new Side(h, 64, srqOnA);
            long seed = Seeds.of("jhca.srq.seed", "SharedReceiveQueueTest on " + pair);
            int n = 24;
            for (int i = 0; i < n; i++) {
                s.post(100 + i, i);
            }
            int mtu = h.activeMtu().bytes();
            for (int k = 0; k < n; k++) {
                int which = k % 3;
                Peer from = s.senders[which];
                Peer to = s.receivers[which];
                // a UD message fits one packet and, behind its 40-byte GRH, the SRQ buffer: one longer than the
                // buffer is dropped by the receiver (rxe_resp.c check_length), which this test is not about
                int len = which == 2 ? 1 + (int) Math.floorMod(seed + k, (long) Math.min(mtu, SLOT - GRH))
                        : 1 + (int) Math.floorMod(seed * 31 + k, (long) (SLOT - 1));
                Payloads.fill(from.buf(), 0, len, seed + k);
                SendWr wr = from.wr(k, WrOpcode.SEND, 0, len);
                if (which == 2) {
                    wr.ud(s.ah, to.qpn(), Peer.QKEY);
                }
                from.post(wr);
                Wcs.assertSuccess(h.await(from.sendCq(), "SEND " + k), WcOpcode.SEND, k, from.qpn(), "send " + k);
                WorkCompletion wc = h.await(to.recvCq(), "receive " + k + " on " + to);
                int got = which == 2 ? GRH + len : len;
                // the SRQ hands out its WQEs in posting order, whichever QP the message arrives on
                Wcs.assertRecv(wc, WcOpcode.RECV, 100 + k, to.qpn(), got, null, "receive " + k + " (seed " + seed + ")");
                Payloads.assertPayload(s.buf, k * SLOT + (which == 2 ? GRH : 0), len, seed + k,
                        "SRQ buffer " + k + " (seed " + seed + ")");
            }
            for (Peer r : s.receivers) {
                h.assertNoCompletion(r.recvCq(), QUIET, "every SRQ WQE was consumed exactly once");
            }
        }
    }

    @ParameterizedTest(name = "{0} SRQ on A: {1}")
    @MethodSource("sides")
    void limitEventExactlyWhenTheCountDropsBelowTheLimit(DevicePair pair, boolean srqOnA) {
        try (Harness h = Harness.open(pair)) {
            Side s = new Side(h, 16, srqOnA);
            int n = 10;
            int limit = 4;
            for (int i = 0; i < n; i++) {
                s.post(i, i);
            }
            s.srq.modify(SrqAttributes.limit(limit), SrqAttributes.LIMIT);
            assertEquals(limit, s.srq.query().srqLimit(), "armed limit");
            // N - L messages leave exactly L posted: not below the limit (IBTA 11.2.4.4, rxe get_srq_wqe "count < limit")
            for (int k = 0; k < n - limit; k++) {
                s.sendRc(k, 0);
            }
            h.run(QUIET);
            assertEquals(List.of(), events(s.ctx, AsyncEvent.Type.SRQ_LIMIT_REACHED), "no limit event with " + limit
                    + " WQEs left and limit " + limit);
            assertEquals(limit, s.srq.query().srqLimit(), "still armed");
            // one more leaves L - 1: the event, once, and the limit is disarmed
            s.sendRc(n - limit, 1);
            List<AsyncEvent> ev = awaitEvents(h, s.ctx, AsyncEvent.Type.SRQ_LIMIT_REACHED, "the SRQ limit event");
            assertEquals(1, ev.size(), "one limit event: " + ev);
            assertEquals(s.srq.describe(), ev.get(0).resource(), "the event names the SRQ");
            assertEquals(0, s.srq.query().srqLimit(), "the event disarms the limit");
            for (int k = n - limit + 1; k < n; k++) {
                s.sendRc(k, k % 2);
            }
            h.run(QUIET);
            assertEquals(List.of(), events(s.ctx, AsyncEvent.Type.SRQ_LIMIT_REACHED), "a disarmed limit stays quiet");

            // re-armed above what is posted: the next WQE taken reports at once
            s.post(50, 0);
            s.post(51, 1);
            s.srq.modify(SrqAttributes.limit(3), SrqAttributes.LIMIT);
            s.sendRc(50, 0);
            assertEquals(1, awaitEvents(h, s.ctx, AsyncEvent.Type.SRQ_LIMIT_REACHED, "the re-armed limit's event").size());
            s.sendRc(51, 1);
        }
    }

    @ParameterizedTest(name = "{0} SRQ on A: {1}")
    @MethodSource("sides")
    void qpErrorReportsLastWqeReachedAndLeavesTheSrqToTheOthers(DevicePair pair, boolean srqOnA) {
        try (Harness h = Harness.open(pair)) {
            Side s = new Side(h, 16, srqOnA);
            for (int i = 0; i < 4; i++) {
                s.post(i, i);
            }
            s.sendRc(0, 0);
            Peer dead = s.receivers[0];
            dead.qp().modify(new QpAttributes().state(QpState.ERR));
            List<AsyncEvent> ev = awaitEvents(h, s.ctx, AsyncEvent.Type.QP_LAST_WQE_REACHED, "last WQE reached");
            assertEquals(1, ev.size(), "one last-WQE event: " + ev);
            assertEquals(dead.qp().describe(), ev.get(0).resource(), "the event names the QP in error");
            h.assertNoCompletion(dead.recvCq(), QUIET, "the QP held no WQE: the SRQ's WQEs are not flushed by it");
            // the other QPs still take the SRQ's WQEs, in order
            s.sendRc(1, 1);
            s.sendRc(2, 1);
            h.run(QUIET);
            assertEquals(List.of(), events(s.ctx, AsyncEvent.Type.QP_LAST_WQE_REACHED), "reported once");
        }
    }

    /**
     * A QP destroyed with a receive completion still in its CQ gives the WQE back: the SRQ takes as many WRs as before
     * (rdma-core's CQ clean frees the SRQ WQE of each receive CQE it drops).
     */
    @ParameterizedTest(name = "{0} SRQ on A: {1}")
    @MethodSource("sides")
    void destroyingAQpWithAnUnpolledReceiveKeepsTheSrqWhole(DevicePair pair, boolean srqOnA) {
        try (Harness h = Harness.open(pair)) {
            Side s = new Side(h, 4, srqOnA);
            int depth = s.srq.query().maxWr();
            for (int i = 0; i < depth; i++) {
                s.post(i, i);
            }
            assertEquals(0, s.srq.postRecv(new RecvWr(1).wrId(99).sge(s.mr, 0, SLOT)), "full");
            Peer from = s.senders[0];
            from.post(from.wr(0, WrOpcode.SEND, 0, 32));
            Wcs.assertSuccess(h.await(from.sendCq(), "SEND"), WcOpcode.SEND, 0, from.qpn(), "send");
            // the receive completed (the send's ACK came after it) but is not polled: the QP goes with it in its CQ
            s.receivers[0].qp().close();
            RecvWr two = new RecvWr(1).wrId(100).sge(s.mr, 0, SLOT).next(new RecvWr(1).wrId(101).sge(s.mr, SLOT, SLOT));
            assertEquals(1, s.srq.postRecv(two), "the destroyed QP's WQE is free again, and only it");
            // the other RC QP takes the remaining WQEs in order
            for (int k = 1; k < depth; k++) {
                s.sendRc(k, 1);
            }
            s.sendRc(100, 1);
        }
    }

    @ParameterizedTest(name = "{0} SRQ on A: {1}")
    @MethodSource("sides")
    void verbsRulesAreEnforced(DevicePair pair, boolean srqOnA) {
        try (Harness h = Harness.open(pair).expectErrors()) {
            Context b = srqOnA ? h.a() : h.b();
            assertTrue(b.queryDevice().maxSrq() > 0 && b.queryDevice().maxSrqWr() > 0
                    && b.queryDevice().maxSrqSge() > 0, "device attributes max_srq, max_srq_wr, max_srq_sge: "
                    + b.queryDevice());
            ProtectionDomain pd = h.track(b.allocatePd());
            int maxWr = b.queryDevice().maxSrqWr();
            errno(VerbsException.EINVAL, () -> pd.createSrq(SrqInitAttributes.create().maxWr(0)));
            errno(VerbsException.EINVAL, () -> pd.createSrq(SrqInitAttributes.create().maxWr(maxWr + 1)));
            errno(VerbsException.EINVAL, () -> pd.createSrq(SrqInitAttributes.create().maxSge(b.queryDevice().maxSrqSge() + 1)));
            errno(VerbsException.EINVAL, () -> pd.createSrq(SrqInitAttributes.create().maxWr(8).srqLimit(9)));
            SharedReceiveQueue srq = h.track(pd.createSrq(SrqInitAttributes.create().maxWr(8).maxSge(1)));
            SrqAttributes q = srq.query();
            assertTrue(q.maxWr() >= 8, "max_wr granted " + q.maxWr());
            assertEquals(1, q.maxSge());
            assertEquals(0, q.srqLimit());
            errno(VerbsException.EINVAL, () -> srq.modify(SrqAttributes.limit(q.maxWr() + 1), SrqAttributes.LIMIT));
            errno(VerbsException.EINVAL, () -> srq.modify(new SrqAttributes(q.maxWr() * 2, 0, 0), SrqAttributes.MAX_WR));
            errno(VerbsException.EINVAL, () -> srq.modify(SrqAttributes.limit(1), 4));

            DmaRegion mem = h.allocate(1 << 16);
            MemoryRegion mr = h.track(pd.register(mem, Access.LOCAL_WRITE));
            // a full SRQ is a return value; a bad chain posts nothing
            RecvWr two = new RecvWr(2).wrId(1).sge(mr, 0, 64).numSge(2);
            two.sge(1).set(mr, 64, 64);
            errno(VerbsException.EINVAL, () -> srq.postRecv(new RecvWr(1).wrId(0).sge(mr, 0, 64).next(two)));
            RecvWr chain = null;
            for (int i = 0; i < q.maxWr() + 1; i++) {
                chain = new RecvWr(1).wrId(i).sge(mr, (long) i * 64, 64).next(chain);
            }
            assertEquals(q.maxWr(), srq.postRecv(chain), "a full SRQ takes what fits");
            assertEquals(0, srq.postRecv(new RecvWr(1).wrId(99).sge(mr, 0, 64)), "a full SRQ takes nothing");

            Peer p = h.peer(b, PeerSpec.rc().pd(pd).srq(srq), 0);
            assertEquals(srq, p.qp().srq());
            assertEquals(0, p.qp().capabilities().maxRecvWr(), "a QP of an SRQ has no receive queue");
            p.toInit(Access.mask(Access.LOCAL_WRITE));
            errno(VerbsException.EINVAL, () -> p.qp().postRecv(new RecvWr(1).wrId(7).sge(mr, 0, 64)));
            errno(VerbsException.EBUSY, srq::close);
            errno(VerbsException.EINVAL, () -> pd.createQp(QpInitAttributes.of(QpType.UC, p.sendCq(), p.recvCq())
                    .srq(srq)));
        }
    }

    /**
     * mlx5 reports max_srq_wr = 2^log_max_srq_sz - 1: its ring holds roundup_pow_of_two(max_wr + 1) WQEs, one kept
     * spare, so an SRQ of max_srq_wr is the largest the device takes, and it is taken. (mlx5 only: rxe's max_srq_wr
     * of 2^20 would preallocate a million slots.)
     */
    @ParameterizedTest(name = "{0} SRQ on A: {1}")
    @MethodSource("sides")
    void mlx5SrqOfMaxSrqWrIsCreated(DevicePair pair, boolean srqOnA) {
        try (Harness h = Harness.open(pair)) {
            Context b = srqOnA ? h.a() : h.b();
            Assumptions.assumeTrue("mlx5".equals(b.device().provider()), "max_srq_wr of " + b.device().provider());
            int maxWr = b.queryDevice().maxSrqWr();
            ProtectionDomain pd = h.track(b.allocatePd());
            SharedReceiveQueue srq = h.track(pd.createSrq(SrqInitAttributes.create().maxWr(maxWr).maxSge(1)));
            assertEquals(maxWr, srq.query().maxWr(), "max_wr granted");
        }
    }

    /**
     * An SRQ of max_srq_sge gather entries is created, and one receive of that many takes a message across all of
     * them: each entry's bytes where it points, in order, nothing written between them (rxe: 27, Linux rxe's
     * RXE_MAX_SRQ_SGE; mlx5: 31, a 512-byte WQE less its 16-byte next segment).
     */
    @ParameterizedTest(name = "{0} SRQ on A: {1}")
    @MethodSource("sides")
    void aReceiveOfMaxSrqSgeEntriesScattersOverEveryOne(DevicePair pair, boolean srqOnA) {
        try (Harness h = Harness.open(pair)) {
            int n = (srqOnA ? h.a() : h.b()).queryDevice().maxSrqSge();
            Side s = new Side(h, 4, srqOnA, n);
            assertEquals(n, s.srq.query().maxSge(), "max_sge granted");
            int each = 5;
            int apart = 64;
            s.buf.setMemory(0, n * apart, (byte) 0x5a);
            RecvWr wr = new RecvWr(n).wrId(7).numSge(n);
            for (int i = 0; i < n; i++) {
                wr.sge(i).set(s.mr, (long) i * apart, each);
            }
            assertEquals(1, s.srq.postRecv(wr), "a receive of " + n + " SGEs");
            long seed = Seeds.of("jhca.srq.seed", "SharedReceiveQueueTest max_srq_sge on " + pair);
            Peer from = s.senders[0];
            Peer to = s.receivers[0];
            Payloads.fill(from.buf(), 0, n * each, seed);
            from.post(from.wr(1, WrOpcode.SEND, 0, n * each));
            Wcs.assertSuccess(h.await(from.sendCq(), "SEND"), WcOpcode.SEND, 1, from.qpn(), "send");
            Wcs.assertRecv(h.await(to.recvCq(), "receive"), WcOpcode.RECV, 7, to.qpn(), n * each, null,
                    "a receive over " + n + " SGEs");
            for (int i = 0; i < n; i++) {
                for (int k = 0; k < apart; k++) {
                    byte want = k < each ? from.buf().getByte(i * each + k) : (byte) 0x5a;
                    assertEquals(want, s.buf.getByte(i * apart + k), "SGE " + i + " of " + n + ", byte " + k
                            + (k < each ? "" : " (past the entry)") + " (seed " + seed + ")");
                }
            }
        }
    }

    private static void errno(int errno, Runnable r) {
        VerbsException e = assertThrows(VerbsException.class, r::run);
        assertEquals(errno, e.errno(), e.getMessage());
    }

    /** The events of {@code type} queued on {@code ctx} now (others are dropped). */
    private static List<AsyncEvent> events(Context ctx, AsyncEvent.Type type) {
        List<AsyncEvent> out = new ArrayList<>();
        AsyncEvent e;
        while ((e = ctx.pollAsyncEvent()) != null) {
            if (e.type() == type) {
                out.add(e);
            }
        }
        return out;
    }

    /** Waits for at least one event of {@code type} on {@code ctx}, then a quiet spell, and returns all of them. */
    private static List<AsyncEvent> awaitEvents(Harness h, Context ctx, AsyncEvent.Type type, String what) {
        List<AsyncEvent> got = new ArrayList<>();
        h.awaitCondition(() -> {
            got.addAll(events(ctx, type));
            return !got.isEmpty();
        }, what, Harness.DEFAULT_WAIT);
        h.run(QUIET);
        got.addAll(events(ctx, type));
        return got;
    }

    /**
     * The SRQ side (B, or A with {@code srqOnA}): one PD, an SRQ with {@code depth} WQEs over one buffer of
     * {@link #SLOT}-byte slots, two RC QPs and a UD QP attached to it; the other side: their peers.
     */
    private static final class Side {
        final Harness h;
        final Context ctx;
        final SharedReceiveQueue srq;
        final MemoryRegion mr;
        final UnsafeBuffer buf;
        final Peer[] senders = new Peer[3];
        final Peer[] receivers = new Peer[3];
        final AddressHandle ah;

        Side(Harness h, int depth, boolean srqOnA) {
            this(h, depth, srqOnA, 1);
        }

        /** An SRQ of {@code depth} WQEs of {@code maxSge} gather entries, its RC and UD QPs connected. */
        Side(Harness h, int depth, boolean srqOnA, int maxSge) {
            this.h = h;
            this.ctx = srqOnA ? h.a() : h.b();
            Context other = srqOnA ? h.b() : h.a();
            ProtectionDomain pd = h.track(ctx.allocatePd());
            srq = h.track(pd.createSrq(SrqInitAttributes.create().maxWr(depth).maxSge(maxSge)));
            DmaRegion mem = h.allocate((long) SLOT * 64);
            mr = h.track(pd.register(mem, Access.LOCAL_WRITE));
            buf = mem.buffer();
            for (int i = 0; i < 2; i++) {
                senders[i] = h.peer(other, PeerSpec.rc(), h.random().nextInt() & 0xFFFFFF);
                receivers[i] = h.peer(ctx, PeerSpec.rc().pd(pd).srq(srq), h.random().nextInt() & 0xFFFFFF);
                h.connect(senders[i], receivers[i]);
            }
            senders[2] = h.peer(other, PeerSpec.ud(), h.random().nextInt() & 0xFFFFFF);
            receivers[2] = h.peer(ctx, PeerSpec.ud().pd(pd).srq(srq), h.random().nextInt() & 0xFFFFFF);
            senders[2].readyUd();
            receivers[2].readyUd();
            ah = h.track(senders[2].pd().createAh(senders[2].avTo(receivers[2])));
        }

        /** Posts one SRQ receive of slot {@code slot}. */
        void post(long wrId, int slot) {
            assertEquals(1, srq.postRecv(new RecvWr(1).wrId(wrId).sge(mr, (long) slot * SLOT, SLOT)), "SRQ WR " + wrId);
        }

        /** A 32-byte SEND on RC QP {@code which}, expected to take the SRQ WQE {@code wrId}. */
        void sendRc(long wrId, int which) {
            Peer from = senders[which];
            Peer to = receivers[which];
            from.post(from.wr(wrId, WrOpcode.SEND, 0, 32));
            Wcs.assertSuccess(h.await(from.sendCq(), "SEND " + wrId), WcOpcode.SEND, wrId, from.qpn(), "send");
            WorkCompletion wc = h.await(to.recvCq(), "receive " + wrId);
            assertEquals(WcStatus.SUCCESS, wc.status(), wc.toString());
            assertEquals(wrId, wc.wrId(), "the SRQ's next WQE: " + wc);
        }
    }
}
