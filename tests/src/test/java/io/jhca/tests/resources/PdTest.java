package io.jhca.tests.resources;

import io.jhca.memory.DmaRegion;
import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.verbs.Access;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.QpInitAttributes;
import io.jhca.verbs.QueuePair;
import io.jhca.verbs.VerbsException;

import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Protection domains, as rdma-core's tests/test_pd.py: allocate, many, dealloc refused while in use. */
class PdTest {

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void allocateAndDeallocate(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            int before = h.a().userCount();
            ProtectionDomain pd = h.track(h.a().allocatePd());
            assertSame(h.a(), pd.context());
            assertFalse(pd.isClosed());
            assertEquals(before + 1, h.a().userCount(), "the context counts the PD as a user");
            pd.close();
            assertTrue(pd.isClosed());
            assertEquals(before, h.a().userCount(), "the PD no longer uses the context");
            pd.close(); // closing twice is harmless
            DmaRegion mem = h.allocate(4096);
            VerbsException e = assertThrows(VerbsException.class, () -> pd.register(mem, Access.LOCAL_WRITE));
            assertEquals(VerbsException.EINVAL, e.errno(), e.getMessage());
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void manyPds(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            List<ProtectionDomain> pds = new ArrayList<>();
            try {
                for (int i = 0; i < 64; i++) {
                    pds.add(h.track(h.a().allocatePd()));
                }
                assertEquals(64, pds.stream().distinct().count());
            } finally {
                pds.forEach(ProtectionDomain::close);
            }
            assertTrue(pds.stream().allMatch(ProtectionDomain::isClosed));
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void deallocWithLiveMrIsRefused(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            DmaRegion mem = h.allocate(8192);
            MemoryRegion mr = h.track(pd.register(mem, Access.LOCAL_WRITE));
            VerbsException e = assertThrows(VerbsException.class, pd::close);
            assertEquals(VerbsException.EBUSY, e.errno(), e.getMessage());
            assertTrue(e.getMessage().contains("1 MR"), "the refusal names the MR: " + e.getMessage());
            assertFalse(pd.isClosed(), "a refused close leaves the PD usable");
            MemoryRegion second = h.track(pd.register(mem, Access.LOCAL_WRITE));
            second.close();
            mr.close();
            pd.close();
            assertTrue(pd.isClosed());
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void deallocWithLiveQpAndMrIsRefusedNamingBoth(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            CompletionQueue cq = h.track(h.a().createCq(16));
            DmaRegion mem = h.allocate(4096);
            MemoryRegion mr = h.track(pd.register(mem, Access.LOCAL_WRITE));
            QueuePair qp = h.track(pd.createQp(QpInitAttributes.rc(cq, cq)));
            VerbsException e = assertThrows(VerbsException.class, pd::close);
            assertEquals(VerbsException.EBUSY, e.errno());
            assertTrue(e.getMessage().contains("MR") && e.getMessage().contains("QP"),
                    "the refusal names the MR and the QP: " + e.getMessage());
            VerbsException cqBusy = assertThrows(VerbsException.class, cq::close);
            assertEquals(VerbsException.EBUSY, cqBusy.errno());
            assertTrue(cqBusy.getMessage().contains("QP"), "CQ refusal names the QP: " + cqBusy.getMessage());
            VerbsException ctxBusy = assertThrows(VerbsException.class, h.a()::close);
            assertEquals(VerbsException.EBUSY, ctxBusy.errno());
            assertTrue(ctxBusy.getMessage().contains("PD") && ctxBusy.getMessage().contains("CQ"),
                    "context refusal names its PD and CQ: " + ctxBusy.getMessage());
            qp.close();
            VerbsException onlyMr = assertThrows(VerbsException.class, pd::close);
            assertFalse(onlyMr.getMessage().contains("QP"), "after the QP is gone only the MR is named: " + onlyMr.getMessage());
            mr.close();
            pd.close();
            cq.close();
        }
    }
}
