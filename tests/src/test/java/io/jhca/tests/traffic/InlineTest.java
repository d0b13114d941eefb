package io.jhca.tests.traffic;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendQueue;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WrOpcode;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * Inline sends: the bytes are copied when the WR is posted, so the source may be overwritten at once and the
 * peer still gets what was there at post time. Both posting styles; over the limit is refused.
 */
class InlineTest {

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void inlineSendAndWrite(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            int max = Math.min(256, h.a().queryDevice().maxInlineData());
            if (max == 0) {
                System.out.println("SKIP [" + pair + "] inline: the device offers no inline data");
                Assumptions.abort("device offers no inline data");
            }
            Peer a = h.peerA(PeerSpec.rc().maxInlineData(max));
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            int granted = a.qp().capabilities().maxInlineData();
            long wrId = 0;
            for (int size : new int[] {1, 13, max}) {
                // postSend: the source MR span is scribbled over right after posting.
                wrId++;
                Payloads.fill(a.buf(), 0, size, wrId);
                b.postRecv(wrId, 0, 4096);
                a.post(new SendWr().wrId(wrId).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED | SendFlags.INLINE)
                        .sge(a.mr(), 0, size));
                Payloads.set(a.buf(), 0, size, (byte) 0xEE);
                Wcs.assertSuccess(h.await(a.sendCq(), "inline SEND " + size), WcOpcode.SEND, wrId, a.qpn(), "send");
                Wcs.assertRecv(h.await(b.recvCq(), "inline RECV " + size), WcOpcode.RECV, wrId, b.qpn(), size, null, "recv");
                Payloads.assertPayload(b.buf(), 0, size, wrId, "inline SEND of " + size + " bytes");

                // builder: inline data from a heap buffer, overwritten right after complete().
                wrId++;
                UnsafeBuffer heap = new UnsafeBuffer(new byte[size]);
                Payloads.fill(heap, 0, size, wrId);
                b.postRecv(wrId, 0, 16);
                SendQueue sq = a.qp().sendQueue().start();
                sq.wrId(wrId).flags(SendFlags.SIGNALED).rdmaWriteImm(b.mr().rkey(), b.addr(8192), (int) wrId).inlineData(heap, 0, size);
                assertEquals(0, sq.complete());
                heap.setMemory(0, size, (byte) 0xEE);
                Wcs.assertSuccess(h.await(a.sendCq(), "inline WRITE_IMM " + size), WcOpcode.RDMA_WRITE, wrId, a.qpn(), "write");
                Wcs.assertRecv(h.await(b.recvCq(), "WRITE_IMM receive " + size), WcOpcode.RECV_RDMA_WITH_IMM, wrId, b.qpn(), size,
                        (int) wrId, "recv");
                Payloads.assertPayload(b.buf(), 8192, size, wrId, "inline RDMA WRITE of " + size + " bytes");
            }
            SendWr tooBig = new SendWr().wrId(99).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED | SendFlags.INLINE)
                    .sge(a.mr(), 0, granted + 1);
            VerbsException e = assertThrows(VerbsException.class, () -> a.qp().postSend(tooBig));
            assertEquals(VerbsException.EINVAL, e.errno(), e.getMessage());
            SendWr inlineRead = new SendWr().wrId(98).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.INLINE)
                    .sge(a.mr(), 0, 8).rdma(b.addr(0), b.mr().rkey());
            assertThrows(VerbsException.class, () -> a.qp().postSend(inlineRead), "INLINE with RDMA READ");
        }
    }
}
