package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

import io.jhca.memory.DmaRegion;
import io.jhca.verbs.fake.FakeProviderAccess;

/** MemoryRegion.contains, the span check of binds and providers: inclusive at the MR's end, overflow-safe. */
class MemoryRegionRangeTest extends VerbsTestSupport {

    @Test
    void aNegativeLengthIsNeverInside() {
        // a length past 2^63 is negative as a long: it names no span of the MR, even from its first byte
        ProtectionDomain pd = track(ctx.allocatePd());
        MemoryRegion mr = track(pd.register(memory(8192), 0, 4096, Access.mask(Access.LOCAL_WRITE)));
        assertTrue(mr.contains(mr.address(), 0));
        assertFalse(mr.contains(mr.address(), -1));
        assertFalse(mr.contains(mr.address() + 4096, -1));
    }

    @Test
    void anMrEndingAtTheTopOfTheAddressSpaceContainsItsLastByte() {
        // start + length wraps past Long.MAX_VALUE here: a check that adds instead of subtracting refuses it all
        ProtectionDomain pd = track(ctx.allocatePd());
        long start = Long.MAX_VALUE - 4095;
        MemoryRegion mr = track(pd.register(track(new UnbackedRegion(start, 4096)), 0, 4096, Access.mask(Access.LOCAL_WRITE)));
        assertEquals(start, mr.address());
        assertTrue(mr.contains(start, 4096));
        assertTrue(mr.contains(start, 1), "the first byte: start + 1 does not wrap, the MR's end does");
        assertTrue(mr.contains(start + 100, 8));
        assertTrue(mr.contains(Long.MAX_VALUE, 1), "the last byte of the address space");
        assertFalse(mr.contains(Long.MAX_VALUE, 2));
        assertFalse(mr.contains(start, Long.MAX_VALUE));
    }

    @Test
    void anMrMayBeExactlyMaxMrSize() {
        // ibv_reg_mr(3): max_mr_size is the largest legal length, one byte more is EINVAL (the fake device's is 4 GiB)
        ProtectionDomain pd = track(ctx.allocatePd());
        long max = FakeProviderAccess.attributes().maxMrSize();
        DmaRegion big = track(new UnbackedRegion(1L << 40, max + 1));
        MemoryRegion mr = track(pd.register(big, 0, max, 0));
        assertEquals(max, mr.length());
        refused(VerbsException.EINVAL, "length " + (max + 1) + " exceeds max_mr_size " + max, () -> pd.register(big, 0, max + 1, 0));
        assertEquals(1, pd.userCount(), "only the legal MR was registered");
    }
}
