package io.jhca.tests.traffic;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.DevicePairs;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Payloads;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.RcParams;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WrOpcode;

import java.util.stream.Stream;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** Every path MTU from 256 to 4096: SEND, WRITE and READ of 3*PMTU+5 bytes (FIRST, 2 MIDDLE, LAST) and of PMTU. */
class PmtuTest {

    static Stream<Arguments> cases() {
        return DevicePairs.cross((Object[]) Mtu.values());
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("cases")
    void everyPathMtu(DevicePair pair, Mtu mtu) {
        try (Harness h = Harness.open(pair)) {
            Mtu max = h.a().queryPort(1).maxMtu();
            if (mtu.bytes() > max.bytes() || mtu.bytes() > h.b().queryPort(1).maxMtu().bytes()) {
                System.out.println("SKIP [" + pair + "] " + mtu + ": above the port's max MTU " + max.bytes());
                Assumptions.abort(mtu + " is above the port's max MTU");
            }
            Peer a = h.peerA(PeerSpec.rc().bufferBytes(65536));
            Peer b = h.peerB(PeerSpec.rc().bufferBytes(65536));
            h.connect(a, b, RcParams.defaults().mtu(mtu));
            int m = mtu.bytes();
            long wrId = 0;
            for (int size : new int[] {m, 3 * m + 5}) {
                String what = " of " + size + " bytes at PMTU " + m;
                wrId++;
                Payloads.fill(a.buf(), 0, size, wrId);
                b.postRecv(wrId, 0, size);
                a.post(a.wr(wrId, WrOpcode.SEND, 0, size));
                Wcs.assertSuccess(h.await(a.sendCq(), "SEND" + what), WcOpcode.SEND, wrId, a.qpn(), "SEND" + what);
                Wcs.assertRecv(h.await(b.recvCq(), "RECV" + what), WcOpcode.RECV, wrId, b.qpn(), size, null, "RECV" + what);
                Payloads.assertPayload(b.buf(), 0, size, wrId, "SEND" + what);

                wrId++;
                Payloads.fill(a.buf(), 0, size, wrId);
                a.post(a.rdma(wrId, WrOpcode.RDMA_WRITE, 0, size, b, 20000));
                Wcs.assertSuccess(h.await(a.sendCq(), "WRITE" + what), WcOpcode.RDMA_WRITE, wrId, a.qpn(), "WRITE" + what);
                Payloads.assertPayload(b.buf(), 20000, size, wrId, "WRITE" + what);

                wrId++;
                Payloads.fill(b.buf(), 40000, size, wrId);
                a.post(a.rdma(wrId, WrOpcode.RDMA_READ, 40000, size, b, 40000));
                Wcs.assertSuccess(h.await(a.sendCq(), "READ" + what), WcOpcode.RDMA_READ, wrId, a.qpn(), "READ" + what);
                Payloads.assertPayload(a.buf(), 40000, size, wrId, "READ" + what);
            }
        }
    }
}
