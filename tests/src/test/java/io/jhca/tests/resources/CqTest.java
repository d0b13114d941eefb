package io.jhca.tests.resources;

import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.VerbsException;
import io.jhca.verbs.WorkCompletion;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Completion queues, as rdma-core's tests/test_cq.py: sizes 1 and max, max+1 refused, empty polls, lifetime. */
class CqTest {

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void sizes(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            int max = h.a().queryDevice().maxCqe();
            assertTrue(max >= 1, "max_cqe " + max);
            CompletionQueue one = h.track(h.a().createCq(1));
            assertTrue(one.capacity() >= 1, "capacity " + one.capacity() + " of a 1-entry CQ");
            CompletionQueue full = h.track(h.a().createCq(max));
            assertTrue(full.capacity() >= max, "capacity " + full.capacity() + " of a max_cqe (" + max + ") CQ");
            for (int bad : new int[] {max + 1, 0, -1, Integer.MAX_VALUE}) {
                VerbsException e = assertThrows(VerbsException.class, () -> h.a().createCq(bad), "cqe " + bad);
                assertEquals(VerbsException.EINVAL, e.errno(), e.getMessage());
                assertTrue(e.getMessage().contains(Integer.toString(bad)), "the refusal names the size: " + e.getMessage());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void manyCqsHaveDistinctNumbersAndPollEmpty(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            Set<Integer> cqns = new HashSet<>();
            WorkCompletion wc = new WorkCompletion();
            WorkCompletion[] wcs = {new WorkCompletion(), new WorkCompletion(), new WorkCompletion()};
            for (int i = 0; i < 32; i++) {
                CompletionQueue cq = h.track(h.a().createCq(64));
                assertTrue(cqns.add(cq.cqn()), "CQN " + cq.cqn() + " unique");
                assertEquals(0, cq.poll(wc), "a new CQ is empty");
                assertEquals(0, cq.poll(wcs), "a new CQ is empty (batch poll)");
            }
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void pollAfterCloseIsRefused(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            CompletionQueue cq = h.track(h.a().createCq(8));
            cq.close();
            VerbsException e = assertThrows(VerbsException.class, () -> cq.poll(new WorkCompletion()));
            assertEquals(VerbsException.EINVAL, e.errno(), e.getMessage());
        }
    }
}
