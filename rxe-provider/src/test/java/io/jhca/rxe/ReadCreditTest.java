package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.verbs.Access;
import io.jhca.verbs.AhAttributes;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpAttributes;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * A requester keeps at most max_rd_atomic READs and atomics outstanding (IBTA's initiator depth; rxe_req.c waits
 * while qp->req.rd_atomic is used up): with more posted, the others leave only as responses come back.
 */
class ReadCreditTest {

    @ParameterizedTest(name = "max_rd_atomic {0}")
    @ValueSource(ints = {1, 2})
    void readsBeyondTheInitiatorDepthWaitForResponses(final int depth) throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024);
             QueuePair c = r.pdA.createQp(QpInitAttributes.rc(r.cqA, r.cqA).maxSendWr(16));
             QueuePair d = r.pdB.createQp(QpInitAttributes.rc(r.cqB, r.cqB))) {
            connect(c, r.b, d, depth, 0x5000, 0x6000);
            connect(d, r.a, c, depth, 0x6000, 0x5000);
            final int reads = depth + 2;
            for (int i = 0; i < reads; i++) {
                c.postSend(new SendWr().wrId(i).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                        .sge(r.mrA, 1024 * i, 64).rdma(r.mrB.address() + 1024 * i, r.mrB.rkey()));
            }
            final long before = r.a.counters().get(Counter.SENT_PKTS);
            for (int i = 0; i < 20; i++) {
                r.a.progress();   // A alone: no response can come back
            }
            assertEquals(depth, r.a.counters().get(Counter.SENT_PKTS) - before, "READ requests sent with no response");
            for (int i = 0; i < reads; i++) {
                r.expect(r.cqA, i, WcStatus.SUCCESS);
            }
        }
    }

    private static void connect(final QueuePair qp, final RxeContext remote, final QueuePair peer, final int depth,
            final int sqPsn, final int rqPsn) {
        qp.modify(QpAttributes.toInit(1, Access.REMOTE_READ));
        qp.modify(QpAttributes.toRtr(peer.qpn(), rqPsn, AhAttributes.to(Rig.gid(remote)).sgidIndex(1), Mtu.MTU_1024)
                .maxDestRdAtomic(depth).minRnrTimer(1));
        qp.modify(QpAttributes.toRts(sqPsn).maxRdAtomic(depth));
    }
}
