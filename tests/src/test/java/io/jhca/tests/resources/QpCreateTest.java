package io.jhca.tests.resources;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpCapabilities;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QpState;
import io.jhca.verbs.QpType;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.VerbsException;

import java.util.HashSet;
import java.util.Set;
import java.util.function.ToIntFunction;
import java.util.function.UnaryOperator;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** QP creation, as rdma-core's tests/test_qp.py: every type, caps at the device limits, above them refused. */
class QpCreateTest {

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void everyTypeStartsInReset(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            CompletionQueue scq = h.track(h.a().createCq(32));
            CompletionQueue rcq = h.track(h.a().createCq(32));
            Set<Integer> qpns = new HashSet<>();
            for (QpType t : QpType.values()) {
                for (int i = 0; i < 4; i++) {
                    QueuePair qp = h.track(pd.createQp(QpInitAttributes.of(t, scq, rcq).maxSendWr(8).maxRecvWr(8).sqSigAll(i == 1)));
                    String what = t + " QP " + qp.describe();
                    assertEquals(t, qp.type(), what);
                    assertEquals(QpState.RESET, qp.state(), what);
                    assertEquals(QpState.RESET, qp.query().state(), what + " (query)");
                    assertSame(scq, qp.sendCq());
                    assertSame(rcq, qp.recvCq());
                    assertSame(pd, qp.pd());
                    assertEquals(i == 1, qp.sqSigAll(), what + " sq_sig_all");
                    // QPN 0 and 1 are the special QPs (SMI, GSI); 24 bits.
                    assertTrue(qp.qpn() > 1 && qp.qpn() <= 0xFFFFFF, what + ": QPN 0x" + Integer.toHexString(qp.qpn()));
                    assertTrue(qpns.add(qp.qpn()), what + ": QPN unique");
                    QpCapabilities c = qp.capabilities();
                    assertTrue(c.maxSendWr() >= 8 && c.maxRecvWr() >= 8 && c.maxSendSge() >= 1 && c.maxRecvSge() >= 1,
                            what + ": granted " + c + " covers what was asked");
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void eachCapAtTheDeviceLimit(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            DeviceAttributes dev = h.a().queryDevice();
            ProtectionDomain pd = h.track(h.a().allocatePd());
            CompletionQueue cq = h.track(h.a().createCq(64));
            // One cap at its limit at a time, as ibv_query_device reports each limit on its own (on mlx5 hardware,
            // too, max_qp_wr and max_sge cannot all be had in one QP: the WQE size grows with the SGEs).
            atLimit(h, pd, cq, "max_send_wr", dev.maxQpWr(), a -> a.maxSendWr(dev.maxQpWr()), QpCapabilities::maxSendWr);
            atLimit(h, pd, cq, "max_recv_wr", dev.maxQpWr(), a -> a.maxRecvWr(dev.maxQpWr()), QpCapabilities::maxRecvWr);
            atLimit(h, pd, cq, "max_send_sge", dev.maxSge(), a -> a.maxSendSge(dev.maxSge()), QpCapabilities::maxSendSge);
            atLimit(h, pd, cq, "max_recv_sge", dev.maxSge(), a -> a.maxRecvSge(dev.maxSge()), QpCapabilities::maxRecvSge);
            atLimit(h, pd, cq, "max_inline_data", dev.maxInlineData(), a -> a.maxInlineData(dev.maxInlineData()),
                    QpCapabilities::maxInlineData);
        }
    }

    private static void atLimit(Harness h, ProtectionDomain pd, CompletionQueue cq, String cap, int limit,
                                UnaryOperator<QpInitAttributes> tweak, ToIntFunction<QpCapabilities> granted) {
        QueuePair qp = h.track(pd.createQp(tweak.apply(QpInitAttributes.rc(cq, cq))));
        assertTrue(granted.applyAsInt(qp.capabilities()) >= limit,
                cap + " at the device limit " + limit + ": granted " + qp.capabilities());
        qp.close();
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void capsAboveTheDeviceLimitsAreRefusedNamingTheCap(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            DeviceAttributes dev = h.a().queryDevice();
            ProtectionDomain pd = h.track(h.a().allocatePd());
            CompletionQueue cq = h.track(h.a().createCq(16));
            refused(pd, cq, "max_send_wr", a -> a.maxSendWr(dev.maxQpWr() + 1));
            refused(pd, cq, "max_recv_wr", a -> a.maxRecvWr(dev.maxQpWr() + 1));
            refused(pd, cq, "max_send_sge", a -> a.maxSendSge(dev.maxSge() + 1));
            refused(pd, cq, "max_recv_sge", a -> a.maxRecvSge(dev.maxSge() + 1));
            refused(pd, cq, "max_inline_data", a -> a.maxInlineData(dev.maxInlineData() + 1));
            assertEquals(0, pd.userCount(), "no QP was left behind by a refused creation");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void cqOfAnotherDeviceIsRefused(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            CompletionQueue mine = h.track(h.a().createCq(16));
            CompletionQueue theirs = h.track(h.b().createCq(16));
            VerbsException e = assertThrows(VerbsException.class, () -> pd.createQp(QpInitAttributes.rc(mine, theirs)));
            assertEquals(VerbsException.EINVAL, e.errno(), e.getMessage());
            QueuePair qp = h.track(pd.createQp(QpInitAttributes.rc(mine, mine)));
            assertNotEquals(0, qp.qpn());
            assertEquals(1, mine.userCount(), "the CQ counts its QP");
            qp.close();
            assertEquals(0, mine.userCount(), "destroying the QP releases its CQ");
        }
    }

    private static void refused(ProtectionDomain pd, CompletionQueue cq, String cap, UnaryOperator<QpInitAttributes> tweak) {
        VerbsException e = assertThrows(VerbsException.class, () -> pd.createQp(tweak.apply(QpInitAttributes.rc(cq, cq))), cap);
        assertEquals(VerbsException.EINVAL, e.errno(), e.getMessage());
        assertTrue(e.getMessage().contains(cap), "the refusal names " + cap + ": " + e.getMessage());
    }
}
