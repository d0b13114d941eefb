package io.jhca.tests.resources;

import io.jhca.memory.DmaRegion;
import io.jhca.tests.harness.DevicePair;
import io.jhca.tests.harness.Harness;
import io.jhca.verbs.Access;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;
import io.jhca.verbs.VerbsException;

import java.util.HashSet;
import java.util.Set;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Memory registration, as rdma-core's tests/test_mr.py: every access combination, refusals, ranges, lifetimes. */
class MrTest {

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void everyAccessCombination(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            DmaRegion mem = h.allocate(64 * 1024);
            Set<Integer> lkeys = new HashSet<>();
            Set<Integer> rkeys = new HashSet<>();
            int registered = 0;
            for (int mask = 0; mask <= Access.ALL; mask++) {
                boolean needsLocalWrite = Access.has(mask, Access.REMOTE_WRITE) || Access.has(mask, Access.REMOTE_ATOMIC);
                String what = "access " + Access.describe(mask);
                if (needsLocalWrite && !Access.has(mask, Access.LOCAL_WRITE)) {
                    int m = mask;
                    VerbsException e = assertThrows(VerbsException.class, () -> pd.register(mem, 0, mem.length(), m), what);
                    assertEquals(VerbsException.EINVAL, e.errno(), what + ": " + e.getMessage());
                    assertTrue(e.getMessage().contains("LOCAL_WRITE"), what + ": message names LOCAL_WRITE: " + e.getMessage());
                    continue;
                }
                MemoryRegion mr = h.track(pd.register(mem, 0, mem.length(), mask));
                registered++;
                assertEquals(mask, mr.access(), what);
                assertEquals(mem.address(), mr.address(), what);
                assertEquals(mem.length(), mr.length(), what);
                assertTrue(lkeys.add(mr.lkey()), what + ": lkey 0x" + Integer.toHexString(mr.lkey()) + " is unique");
                if ((mask & (Access.REMOTE_WRITE.bit() | Access.REMOTE_READ.bit() | Access.REMOTE_ATOMIC.bit())) != 0) {
                    // Only an MR a peer may reach needs an rkey of its own (Linux rxe gives the others rkey 0).
                    assertTrue(rkeys.add(mr.rkey()), what + ": rkey 0x" + Integer.toHexString(mr.rkey()) + " is unique");
                }
            }
            // 32 masks, of which those with REMOTE_WRITE or REMOTE_ATOMIC but no LOCAL_WRITE (12) are refused.
            assertEquals(20, registered);
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void remoteWriteWithoutLocalWriteIsRefused(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            DmaRegion mem = h.allocate(4096);
            VerbsException w = assertThrows(VerbsException.class, () -> pd.register(mem, Access.REMOTE_WRITE));
            assertEquals(VerbsException.EINVAL, w.errno());
            VerbsException a = assertThrows(VerbsException.class, () -> pd.register(mem, Access.REMOTE_ATOMIC, Access.REMOTE_READ));
            assertEquals(VerbsException.EINVAL, a.errno());
            VerbsException unknown = assertThrows(VerbsException.class, () -> pd.register(mem, 0, 4096, 0x40));
            assertEquals(VerbsException.EINVAL, unknown.errno());
            assertEquals(0, pd.userCount(), "nothing was registered");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void outOfRangeRegistrationIsRefused(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            DmaRegion mem = h.allocate(16384);
            long len = mem.length();
            long[][] bad = {{0, len + 1}, {1, len}, {len, 1}, {-1, 16}, {0, -1}, {Long.MAX_VALUE, 2}, {8, Long.MAX_VALUE}};
            for (long[] r : bad) {
                VerbsException e = assertThrows(VerbsException.class,
                        () -> pd.register(mem, r[0], r[1], Access.mask(Access.LOCAL_WRITE)),
                        "[" + r[0] + ", +" + r[1] + ") of a " + len + "-byte region");
                assertEquals(VerbsException.EINVAL, e.errno(), e.getMessage());
            }
            MemoryRegion edge = h.track(pd.register(mem, len - 4096, 4096, Access.mask(Access.LOCAL_WRITE)));
            assertEquals(mem.address() + len - 4096, edge.address(), "a sub-range MR starts at its offset");
            assertEquals(len - 4096, edge.offset());
            assertTrue(edge.contains(edge.address(), 4096));
            assertFalse(edge.contains(edge.address() - 1, 1));
            assertFalse(edge.contains(edge.address() + 1, 4096));
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void registeringAClosedRegionIsEinval(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            DmaRegion closed = h.allocate(4096);
            closed.close();
            VerbsException whole = assertThrows(VerbsException.class, () -> pd.register(closed, 0, 4096, Access.mask(Access.LOCAL_WRITE)));
            assertEquals(VerbsException.EINVAL, whole.errno(), whole.getMessage());
            // The varargs form must refuse the same way (not with the region's IllegalStateException).
            VerbsException varargs = assertThrows(VerbsException.class, () -> pd.register(closed, Access.LOCAL_WRITE));
            assertEquals(VerbsException.EINVAL, varargs.errno(), varargs.getMessage());
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void registrationKeepsTheMemoryMapped(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            DmaRegion mem = h.allocate(8192);
            MemoryRegion mr = h.track(pd.register(mem, Access.LOCAL_WRITE, Access.REMOTE_READ));
            assertThrows(IllegalStateException.class, mem::close, "a registered region cannot be unmapped");
            assertFalse(mem.isClosed());
            mr.close();
            assertTrue(mr.isClosed());
            mem.close();
            assertTrue(mem.isClosed(), "after deregistration the region closes");
        }
    }

    @ParameterizedTest
    @MethodSource("io.jhca.tests.harness.DevicePairs#all")
    void manyRegistrationsOfOneRegion(DevicePair pair) {
        try (Harness h = Harness.open(pair)) {
            ProtectionDomain pd = h.track(h.a().allocatePd());
            DmaRegion mem = h.allocate(1 << 20);
            Set<Integer> lkeys = new HashSet<>();
            for (int i = 0; i < 256; i++) {
                MemoryRegion mr = h.track(pd.register(mem, i * 4096L, 4096, Access.mask(Access.LOCAL_WRITE, Access.REMOTE_WRITE)));
                assertTrue(lkeys.add(mr.lkey()), "lkey of MR " + i + " is unique");
            }
            assertEquals(256, pd.userCount());
        }
    }
}
