package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.stream.IntStream;
import java.util.stream.Stream;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import io.jhca.rxe.transport.RxeCounters.Counter;
import io.jhca.rxe.wire.Aeth;
import io.jhca.rxe.wire.Psn;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpState;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WorkCompletion;
import io.jhca.verbs.WrOpcode;

/**
 * Responses whose PSN was never sent (ghosts, e.g. 2^23 past the highest PSN sent, where modular comparison
 * flips) are dropped and counted: they never complete a WQE whose last packet has not gone out (rxe_comp.c
 * check_psn only completes WQEs that were fully sent).
 */
class GhostResponseTest {

    private static final int MIB = 1 << 20;
    /** Rig's send PSN of A. */
    private static final int SQ_PSN = 0x1000;

    enum Kind { ACK, NAK_SEQ, RNR_NAK, NAK_INVALID, READ_RESPONSE, ATOMIC_ACK }

    static Stream<Arguments> ghosts() {
        // distances past the highest PSN sent + 1: 0 = the next PSN, 2^23 = where psn_compare flips sign
        final int[] past = {0, 1, Psn.HALF - 1, Psn.HALF, Psn.HALF + 1, Psn.HALF + 0x100, Psn.MASK - 0x200};
        return Stream.of(Kind.values()).flatMap(k -> IntStream.of(past).mapToObj(d -> Arguments.of(k, d)));
    }

    @ParameterizedTest(name = "{0} at highest sent + 1 + {1}")
    @MethodSource("ghosts")
    void ghostResponseNeverCompletesAHalfSentMessage(final Kind kind, final int past) throws Exception {
        try (Rig r = Rig.rc(ProgressMode.CALLER, 2 * MIB, Mtu.MTU_1024); Forger peer = new Forger(r.b, r.a)) {
            for (int i = 0; i < MIB; i++) {
                r.memA.buffer().putByte(i, (byte) (i * 31 + 7));
            }
            r.qpB.postRecv(new RecvWr().wrId(50).sge(r.mrB, MIB, 64));
            r.qpA.postSend(new SendWr().wrId(1).opcode(WrOpcode.RDMA_WRITE).sendFlags(SendFlags.SIGNALED)
                    .sge(r.mrA, 0, MIB).rdma(r.mrB.address(), r.mrB.rkey())
                    .next(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                            .sge(r.mrA, MIB, 64)));
            for (int i = 0; i < 100; i++) {
                r.a.progress(); // B does not run: nothing is acknowledged, A stops at its unacked window
            }
            // PSNs sent (a slow machine may let the retransmit timer resend some of them)
            final long sent = r.a.counters().get(Counter.SENT_PKTS) - r.a.counters().get(Counter.RETRANSMITTED_PKTS);
            // rxe_req.c stops once req.psn > comp.psn + RXE_MAX_UNACKED_PSNS (128): PSNs 0x1000..0x1080 are out,
            // 132,096 of the WRITE's 1,048,576 bytes
            assertEquals(129, sent, "packets of the WRITE out before anything is acknowledged");
            final int highestSent = Psn.add(SQ_PSN, (int) sent - 1);
            final int psn = Psn.add(highestSent, 1 + past);
            forge(peer, kind, r.qpA.qpn(), psn);
            final long ghostsBefore = r.a.counters().get(Counter.DROP_GHOST_RESPONSE);
            final long end = System.nanoTime() + 5_000_000_000L;
            while (r.a.counters().get(Counter.DROP_GHOST_RESPONSE) == ghostsBefore) {
                assertTrue(System.nanoTime() < end, () -> "ghost " + kind + " not counted: " + r.a.counters());
                r.a.progress();
                final WorkCompletion wc = new WorkCompletion();
                assertEquals(0, r.cqA.poll(wc), () -> "a ghost " + kind + " completed " + wc);
            }
            assertEquals(QpState.RTS, r.qpA.state());

            // the real traffic still completes, byte for byte
            r.expect(r.cqA, 1, WcStatus.SUCCESS);
            r.expect(r.cqA, 2, WcStatus.SUCCESS);
            r.expect(r.cqB, 50, WcStatus.SUCCESS);
            for (int i = 0; i < MIB; i++) {
                final int at = i;
                assertEquals((byte) (i * 31 + 7), r.memB.buffer().getByte(i), () -> "byte " + at);
            }
        }
    }

    static void forge(final Forger peer, final Kind kind, final int qpn, final int psn) throws Exception {
        switch (kind) {
            case ACK:
                peer.ack(qpn, psn, 0x1F000000);
                break;
            case NAK_SEQ:
                peer.ack(qpn, psn, Aeth.nakSyndrome(Aeth.NAK_PSN_SEQUENCE_ERROR) << 24);
                break;
            case RNR_NAK:
                peer.ack(qpn, psn, Aeth.rnrNakSyndrome(1) << 24);
                break;
            case NAK_INVALID:
                peer.ack(qpn, psn, Aeth.nakSyndrome(Aeth.NAK_INVALID_REQUEST) << 24);
                break;
            case READ_RESPONSE:
                peer.readResponseOnly(qpn, psn, 64);
                break;
            default:
                peer.atomicAck(qpn, psn, 0x1234);
        }
    }
}
