package io.jhca.tests.traffic;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WrOpcode;

import java.time.Duration;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** One 64 MiB SEND and one 64 MiB RDMA WRITE, checked by CRC-32C against the payload generator (never printed). */
class LargeMessageTest {
    private static final int SIZE = 64 << 20;
    private static final Duration LIMIT = Duration.ofSeconds(60);

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void sixtyFourMibSendAndWrite(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc().bufferBytes(SIZE).cqDepth(16));
            Peer b = h.peerB(PeerSpec.rc().bufferBytes(SIZE).cqDepth(16));
            h.connect(a, b);
            Payloads.fill(a.buf(), 0, SIZE, 64);
            b.postRecv(1, 0, SIZE);
            a.post(a.wr(2, WrOpcode.SEND, 0, SIZE));
            Wcs.assertSuccess(h.await(a.sendCq(), 1, "64 MiB SEND", LIMIT)[0], WcOpcode.SEND, 2, a.qpn(), "64 MiB SEND");
            Wcs.assertRecv(h.await(b.recvCq(), 1, "64 MiB RECV", LIMIT)[0], WcOpcode.RECV, 1, b.qpn(), SIZE, null, "64 MiB RECV");
            Payloads.assertCrc(b.buf(), 0, SIZE, 64, "64 MiB SEND");

            Payloads.fill(a.buf(), 0, SIZE, 65);
            a.post(a.rdma(3, WrOpcode.RDMA_WRITE, 0, SIZE, b, 0));
            Wcs.assertSuccess(h.await(a.sendCq(), 1, "64 MiB WRITE", LIMIT)[0], WcOpcode.RDMA_WRITE, 3, a.qpn(), "64 MiB WRITE");
            Payloads.assertCrc(b.buf(), 0, SIZE, 65, "64 MiB RDMA WRITE");
        }
    }
}
