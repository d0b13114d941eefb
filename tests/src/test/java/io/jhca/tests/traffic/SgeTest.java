package io.jhca.tests.traffic;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WrOpcode;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** Several SGEs: gather on send and RDMA WRITE, scatter on receive and RDMA READ, crossing packet boundaries. */
class SgeTest {
    private static final byte CANARY = (byte) 0xA5;

    /** Gather spans of A (offset, length): uneven, non-adjacent, one of 0 bytes. */
    private static final int[][] GATHER = {{0, 100}, {5000, 1500}, {9000, 3}, {12000, 0}, {20000, 2100}};
    /** Scatter spans of B's receive: the 3703-byte message fills the first three and part of the fourth. */
    private static final int[][] SCATTER = {{0, 50}, {3000, 1000}, {7000, 2000}, {16000, 4000}};

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void gatherSendScatterReceive(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().maxSendSge(GATHER.length).maxRecvSge(SCATTER.length).bufferBytes(65536));
            Peer b = h.peerB(PeerSpec.rc().maxSendSge(GATHER.length).maxRecvSge(SCATTER.length).bufferBytes(65536));
            h.connect(a, b);
            int total = fillGather(a.buf());
            Payloads.set(b.buf(), 0, b.buf().capacity(), CANARY);
            RecvWr rwr = new RecvWr(SCATTER.length).wrId(9).numSge(SCATTER.length);
            for (int i = 0; i < SCATTER.length; i++) {
                rwr.sge(i).set(b.mr(), SCATTER[i][0], SCATTER[i][1]);
            }
            assertEquals(1, b.qp().postRecv(rwr));
            SendWr wr = new SendWr(GATHER.length).wrId(8).opcode(WrOpcode.SEND_WITH_IMM).immData(77)
                    .sendFlags(SendFlags.SIGNALED).numSge(GATHER.length);
            for (int i = 0; i < GATHER.length; i++) {
                wr.sge(i).set(a.mr(), GATHER[i][0], GATHER[i][1]);
            }
            a.post(wr);
            Wcs.assertSuccess(h.await(a.sendCq(), "gathered SEND"), WcOpcode.SEND, 8, a.qpn(), "send");
            Wcs.assertRecv(h.await(b.recvCq(), "scattered RECV"), WcOpcode.RECV, 9, b.qpn(), total, 77, "recv");
            byte[] sent = gathered(a.buf());
            int done = 0;
            for (int[] s : SCATTER) {
                int n = Math.min(s[1], total - done);
                for (int i = 0; i < n; i++) {
                    assertEquals(sent[done + i], b.buf().getByte(s[0] + i), "scatter span at " + s[0] + " byte " + i);
                }
                Payloads.assertFilled(b.buf(), s[0] + n, s[1] - n, CANARY, "unused part of scatter span at " + s[0]);
                done += n;
            }
            Payloads.assertFilled(b.buf(), 50, 3000 - 50, CANARY, "the gap between scatter spans");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void gatherWriteAndScatterRead(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().maxSendSge(GATHER.length).bufferBytes(65536));
            Peer b = h.peerB(PeerSpec.rc().bufferBytes(65536));
            h.connect(a, b);
            int total = fillGather(a.buf());
            Payloads.set(b.buf(), 0, b.buf().capacity(), CANARY);
            // RDMA WRITE gathering five spans into one contiguous remote range, with the builder.
            SendQueue sq = a.qp().sendQueue().start();
            sq.wrId(1).flags(SendFlags.SIGNALED).rdmaWrite(b.mr().rkey(), b.addr(1000));
            for (int[] g : GATHER) {
                sq.sge(a.mr(), g[0], g[1]);
            }
            assertEquals(0, sq.complete());
            Wcs.assertSuccess(h.await(a.sendCq(), "gathered WRITE"), WcOpcode.RDMA_WRITE, 1, a.qpn(), "write");
            byte[] sent = gathered(a.buf());
            for (int i = 0; i < total; i++) {
                assertEquals(sent[i], b.buf().getByte(1000 + i), "written byte " + i);
            }
            Payloads.assertFilled(b.buf(), 1000 + total, 64, CANARY, "after the write");

            // RDMA READ of those bytes back, scattered over the gather spans of A (cleared first).
            for (int[] g : GATHER) {
                Payloads.set(a.buf(), g[0], g[1], (byte) 0);
            }
            SendWr rd = new SendWr(GATHER.length).wrId(2).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                    .numSge(GATHER.length).rdma(b.addr(1000), b.mr().rkey());
            for (int i = 0; i < GATHER.length; i++) {
                rd.sge(i).set(a.mr(), GATHER[i][0], GATHER[i][1]);
            }
            a.post(rd);
            Wcs.assertSuccess(h.await(a.sendCq(), "scattered READ"), WcOpcode.RDMA_READ, 2, a.qpn(), "read");
            byte[] back = gathered(a.buf());
            for (int i = 0; i < total; i++) {
                assertEquals(sent[i], back[i], "read-back byte " + i);
            }
        }
    }

    private static int fillGather(UnsafeBuffer buf) {
        int total = 0;
        for (int i = 0; i < GATHER.length; i++) {
            Payloads.fill(buf, GATHER[i][0], GATHER[i][1], 1000 + i);
            total += GATHER[i][1];
        }
        return total;
    }

    private static byte[] gathered(UnsafeBuffer buf) {
        int total = 0;
        for (int[] g : GATHER) {
            total += g[1];
        }
        byte[] out = new byte[total];
        int at = 0;
        for (int[] g : GATHER) {
            buf.getBytes(g[0], out, at, g[1]);
            at += g[1];
        }
        return out;
    }
}
