package io.jhca.tests.stats;

import io.jhca.mlx5.Mlx5Context;
import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.tests.harness.Peer;
import io.jhca.tests.harness.PeerSpec;
import io.jhca.tests.harness.Wcs;
import io.jhca.verbs.Context;
import io.jhca.verbs.WcOpcode;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

import java.util.Map;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

/**
 * {@code Context.statistics()} on every device pair: an event provoked on the wire shows up in the device counters of
 * the side it happened at, exactly once per event. The counters are the device's (a port's Q counter set on mlx5,
 * the device's counters on rxe), so each test compares a snapshot before with one after. Names by provider: mlx5
 * reports its Q counters under the kernel's names (rx_write_requests, req_remote_access_errors,
 * resp_remote_access_errors), rxe its hw_counters and NAK counts (rx_write_requests, rcvd_nak_rem_access,
 * sent_nak_rem_access).
 */
class StatisticsTest {

    private static final int WRITES = 9;
    /** A WRITE request the responder accepted: mlx5's Q counter name, which rxe uses too. */
    private static final String WRITE_REQUESTS = "rx_write_requests";

    /** What a requester counts for a remote access NAK it received. */
    private static String requesterAccessErrors(Context ctx) {
        return ctx instanceof Mlx5Context ? "req_remote_access_errors" : "rcvd_nak_rem_access";
    }

    /** What a responder counts for a remote access NAK it sent. */
    private static String responderAccessErrors(Context ctx) {
        return ctx instanceof Mlx5Context ? "resp_remote_access_errors" : "sent_nak_rem_access";
    }

    private static long delta(Map<String, Long> before, Map<String, Long> after, String name, Context ctx) {
        Long b = before.get(name);
        Long a = after.get(name);
        assertNotNull(a, ctx.name() + " reports no " + name + ": " + after.keySet());
        return a - b;
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void rdmaWritesCountAtTheResponder(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            Map<String, Long> beforeA = h.a().statistics();
            Map<String, Long> beforeB = h.b().statistics();
            for (int i = 0; i < WRITES; i++) {
                a.post(a.rdma(i, WrOpcode.RDMA_WRITE, 64L * i, 64, b, 64L * i));
                Wcs.assertSuccess(h.await(a.sendCq(), "WRITE " + i), WcOpcode.RDMA_WRITE, i, a.qpn(), "WRITE " + i);
            }
            Map<String, Long> afterA = h.a().statistics();
            Map<String, Long> afterB = h.b().statistics();
            assertEquals(WRITES, delta(beforeB, afterB, WRITE_REQUESTS, h.b()),
                    h.b().name() + " (responder) after " + WRITES + " WRITEs: " + afterB);
            assertEquals(0, delta(beforeA, afterA, WRITE_REQUESTS, h.a()),
                    h.a().name() + " (requester) received no WRITE: " + afterA);
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void aWriteToABadRkeyCountsAtBothEnds(DevicePair pair) {
        try (Harness h = Harness.open(pair).expectErrors()) {
            Peer a = h.peerA(PeerSpec.rc());
            Peer b = h.peerB(PeerSpec.rc());
            h.connect(a, b);
            Map<String, Long> beforeA = h.a().statistics();
            Map<String, Long> beforeB = h.b().statistics();
            // another key index: no MR answers to it at B
            a.post(a.wr(1, WrOpcode.RDMA_WRITE, 0, 16).rdma(b.addr(0), b.mr().rkey() ^ 0x100));
            Wcs.assertStatus(h.await(a.sendCq(), "WRITE to a bad rkey"), WcStatus.REM_ACCESS_ERR, 1, a.qpn(),
                    "WRITE to a bad rkey");
            Map<String, Long> afterA = h.a().statistics();
            Map<String, Long> afterB = h.b().statistics();
            assertEquals(1, delta(beforeA, afterA, requesterAccessErrors(h.a()), h.a()),
                    h.a().name() + " (requester): " + afterA);
            assertEquals(1, delta(beforeB, afterB, responderAccessErrors(h.b()), h.b()),
                    h.b().name() + " (responder): " + afterB);
            assertEquals(0, delta(beforeA, afterA, responderAccessErrors(h.a()), h.a()),
                    h.a().name() + " sent no NAK: " + afterA);
        }
    }
}
