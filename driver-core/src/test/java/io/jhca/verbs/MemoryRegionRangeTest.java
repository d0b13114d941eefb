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
    void anMrAcrossTwoToThe63KeepsItsUpperHalf() {
        // VAs are unsigned: a signed compare puts 0x8000000000000000 below the start and refuses the MR's upper half
        ProtectionDomain pd = track(ctx.allocatePd());
        long start = Long.MAX_VALUE - 2047;
        MemoryRegion mr = track(pd.register(track(new UnbackedRegion(start, 4096)), 0, 4096, Access.mask(Access.LOCAL_WRITE)));
        assertTrue(mr.contains(start, 4096));
        assertTrue(mr.contains(Long.MIN_VALUE, 8), "the first bytes past 2^63");
        assertTrue(mr.contains(Long.MIN_VALUE + 2047, 1), "the last byte");
        assertFalse(mr.contains(Long.MIN_VALUE + 2047, 2), "one past the end");
        assertFalse(mr.contains(start - 1, 1), "one before the start");
        assertFalse(mr.contains(0, 1), "an address far below the start wraps to an offset past the end");
    }

    @Test
    void anMrAtTheTopOfTheUnsignedSpaceContainsItsLastByte() {
        ProtectionDomain pd = track(ctx.allocatePd());
        long start = -4096; // 0xFFFFFFFFFFFFF000
        MemoryRegion mr = track(pd.register(track(new UnbackedRegion(start, 4096)), 0, 4096, Access.mask(Access.LOCAL_WRITE)));
        assertTrue(mr.contains(-1, 1), "the last byte of the address space");
        assertFalse(mr.contains(-1, 2));
        assertFalse(mr.contains(Long.MAX_VALUE, 1), "2^63 - 1 is below the start, unsigned");
        assertFalse(mr.contains(start, 4097));
    }

    @Test
    void aLengthPastTheMrIsRefusedWhateverTheAddress() {
        ProtectionDomain pd = track(ctx.allocatePd());
        MemoryRegion mr = track(pd.register(memory(8192), 0, 4096, Access.mask(Access.LOCAL_WRITE)));
        assertFalse(mr.contains(mr.address(), 4097));
        assertFalse(mr.contains(mr.address() - 1, 4097), "length - len would go negative");
        assertTrue(mr.contains(mr.address() + 4096, 0), "an empty span at the end");
        assertFalse(mr.contains(mr.address() + 4097, 0), "an empty span past the end");
    }

    @Test
    void aSpanIsCheckedWithUnsignedAddresses() {
        // the check memory windows use too (a window's span inside its MR, a remote access inside the window)
        assertTrue(MemoryRegion.spanContains(Long.MAX_VALUE, 2, Long.MIN_VALUE, 1), "the second byte, past 2^63");
        assertFalse(MemoryRegion.spanContains(Long.MAX_VALUE, 2, Long.MIN_VALUE, 2));
        assertFalse(MemoryRegion.spanContains(-16, 16, Long.MAX_VALUE, 1), "2^63 below the start");
        assertTrue(MemoryRegion.spanContains(-16, 16, -1, 1));
        assertFalse(MemoryRegion.spanContains(0x1000, 0x1000, 0xFFF, 1));
        assertTrue(MemoryRegion.spanContains(0x1000, 0x1000, 0x1FFF, 1));
        assertFalse(MemoryRegion.spanContains(0x1000, 0x1000, 0x2000, 1));
        assertFalse(MemoryRegion.spanContains(0x1000, 0, 0x1000, 1), "nothing is inside an empty span");
        assertTrue(MemoryRegion.spanContains(0x1000, 0, 0x1000, 0));
        assertFalse(MemoryRegion.spanContains(0x1000, 0x1000, 0x1000, -1), "a length past 2^63");
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
