package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.function.UnaryOperator;

import org.junit.jupiter.api.Test;

import io.jhca.rxe.transport.RxeCounters;
import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * The NAKs that tell a requester where to resume (rxe_resp.c check_psn and check_resource, rxe_comp.c): a responder
 * NAKs a gap in the PSNs once, and a requester whose packet was refused for want of a receive (RNR NAK) resumes at
 * that packet, not at the start of its message.
 */
class SequenceNakTest {

    /**
     * Three packets ahead of the expected PSN (0x1000): one PSN sequence error NAK for the first, the other two dropped
     * without one; the expected packet ends the gap, and the next gap gets a NAK of its own. The QP stays in RTS.
     */
    @Test
    void aGapInThePsnsIsNakedOnce() throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 1 << 16, Mtu.MTU_1024); Forger peer = new Forger(r.a, r.b)) {
            final RxeCounters c = r.b.counters();
            final long va = r.mrB.address();
            for (int psn = 0x1002; psn <= 0x1004; psn++) {
                peer.writeOnly(r.qpB.qpn(), psn, va, r.mrB.rkey(), 4, 4);
            }
            r.await(() -> c.get(Counter.OUT_OF_SEQUENCE) == 3, "three packets ahead");
            assertEquals(1, c.get(Counter.SENT_NAK_SEQ_ERR), c.toString());
            assertEquals(2, c.get(Counter.DROP_OUT_OF_SEQUENCE), c.toString());
            assertEquals(0, r.memB.buffer().getInt(0), "no packet of the gap was executed");

            peer.writeOnly(r.qpB.qpn(), 0x1000, va, r.mrB.rkey(), 4, 4);
            r.await(() -> c.get(Counter.RX_WRITE_REQUESTS) == 1, "the expected packet");
            peer.writeOnly(r.qpB.qpn(), 0x1003, va, r.mrB.rkey(), 4, 4);
            r.await(() -> c.get(Counter.OUT_OF_SEQUENCE) == 4, "a packet ahead again");
            assertEquals(2, c.get(Counter.SENT_NAK_SEQ_ERR), "a new gap, a new NAK: " + c);
            assertEquals(QpState.RTS, r.qpB.state());
        }
    }

    /**
     * A WRITE with immediate of three MTUs to a QP with no receive posted: its FIRST and MIDDLE packets land, its LAST
     * (which needs the receive) gets an RNR NAK. Every retry, and the one after the receive is posted, sends the LAST
     * packet alone: the responder sees no duplicate, and the message completes once with all its bytes.
     */
    @Test
    void anRnrNakOnTheLastPacketResumesAtThatPacket() throws Exception {
        // a local ACK timeout of 4.3 s (code 20): a retransmission by the timer, after a stall of the machine, would
        // resend packets too and blur what is counted here
        try (Rig r = new Rig(Rig.config("rnrA", ProgressMode.CALLER).build(), Rig.config("rnrB", ProgressMode.CALLER)
                .build(), QpType.RC, 1 << 16, Mtu.MTU_1024, UnaryOperator.identity(), 20)) {
            final int length = 3 * 1024;
            TrafficTest.fill(r.memA.buffer(), 0, length, 21);
            r.qpA.postSend(new SendWr().wrId(7).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immData(0x77)
                    .sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, length).rdma(r.mrB.address() + 8192, r.mrB.rkey()));
            r.await(() -> r.b.counters().get(Counter.SEND_RNR_ERR) >= 2, "two RNR NAKs");
            r.qpB.postRecv(new RecvWr().wrId(8));
            r.expect(r.cqA, 7, WcStatus.SUCCESS);
            final WorkCompletion wc = r.expect(r.cqB, 8, WcStatus.SUCCESS);
            assertEquals(WcOpcode.RECV_RDMA_WITH_IMM, wc.opcode());
            TrafficTest.check(r.memB.buffer(), 8192, length, 21);
            assertEquals(0, r.b.counters().get(Counter.DUPLICATE_REQUEST),
                    "FIRST or MIDDLE sent again after the RNR NAK of LAST: " + r.a.counters() + " / " + r.b.counters());
            assertEquals(r.b.counters().get(Counter.SEND_RNR_ERR), r.a.counters().get(Counter.RETRANSMITTED_PKTS),
                    "one packet resent per RNR NAK");
        }
    }
}
