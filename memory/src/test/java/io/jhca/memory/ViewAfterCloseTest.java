package io.jhca.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.time.Duration;
import java.util.List;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import io.jhca.testkit.ChildJvm;

/**
 * A buffer view that outlives its region must refuse access with an exception, never crash the JVM. Touching
 * unmapped memory is a SIGSEGV, so each case runs in a child JVM ({@link StaleViewProbe}) and the test asserts
 * that the child exited normally with the expected outcome.
 */
class ViewAfterCloseTest {

    @Test
    void viewTouchedAfterCloseThrowsInsteadOfCrashing() throws Exception {
        final String out = runProbe("after-close");
        assertTrue(out.contains("REFUSED IndexOutOfBoundsException"), out);
    }

    @Test
    void viewsReadWhileTheRegionClosesNeverCrash() throws Exception {
        final long seed = System.nanoTime();
        final String out = runProbe("racing-close", Long.toString(seed));
        assertTrue(out.contains("REFUSED "), "seed " + seed + ": " + out);
    }

    @Test
    void closeWithAViewAliveReleasesThePinnedPagesNowAndTheRangeOnceTheViewIsGone() throws Exception {
        final long size = 1 << 20;
        final long before = ProcSelf.vmLckKb();
        final long address = closeWhileAViewIsHeld(size, before);
        // the Cleaner unmaps once the view is unreachable; bounded, not timed: 200 collections at most
        for (int i = 0; i < 200 && ProcSelf.mapped(address); i++) {
            System.gc();
            Thread.sleep(10);
        }
        assertFalse(ProcSelf.mapped(address), "0x" + Long.toHexString(address) + " still mapped with no view left");
    }

    /** In its own frame, so no local of the caller keeps the view reachable afterwards. */
    private static long closeWhileAViewIsHeld(final long size, final long lockedBefore) throws IOException {
        final DmaRegion region = DmaMemory.allocate(size);
        final long address = region.address();
        final UnsafeBuffer view = region.buffer(0, 4096);
        view.putLong(8, 7);
        assertTrue(ProcSelf.vmLckKb() - lockedBefore >= size / 1024);
        region.close();
        // the lock is gone at once; the range stays mapped (fresh pages) while the view can still reach it
        assertTrue(ProcSelf.vmLckKb() - lockedBefore < size / 1024, "VmLck " + ProcSelf.vmLckKb() + " kB, before " + lockedBefore);
        assertTrue(ProcSelf.mapped(address));
        assertEquals(0, view.capacity());
        assertThrows(IndexOutOfBoundsException.class, () -> view.getLong(8));
        return address;
    }

    @Test
    void sliceViewsFailAfterTheSliceClosesWhileTheParentStaysUsable() {
        try (DmaRegion region = DmaMemory.allocate(8192)) {
            final DmaRegion slice = region.slice(4096, 4096);
            final UnsafeBuffer sliceView = slice.buffer(0, 64);
            final UnsafeBuffer sliceWhole = slice.buffer();
            final UnsafeBuffer parentView = region.buffer(4096, 64);
            sliceView.putInt(0, 5);
            slice.close();
            assertThrows(IndexOutOfBoundsException.class, () -> sliceView.getInt(0));
            assertThrows(IndexOutOfBoundsException.class, () -> sliceWhole.getInt(0));
            assertEquals(5, parentView.getInt(0), "the parent's own views are untouched");
            assertEquals(5, region.buffer().getInt(4096));
        }
    }

    @Test
    void aViewCannotBeRewrappedAwayFromItsRegion() {
        try (DmaRegion region = DmaMemory.allocate(4096)) {
            final UnsafeBuffer view = region.buffer(0, 64);
            final UnsafeBuffer whole = region.buffer();
            assertThrows(UnsupportedOperationException.class, () -> view.wrap(new byte[8]));
            assertThrows(UnsupportedOperationException.class, () -> whole.wrap(region.address(), 8));
            assertThrows(UnsupportedOperationException.class, () -> view.wrap(whole, 0, 8));
            assertEquals(64, view.capacity());
            view.putLong(0, 3);
            assertEquals(3, new UnsafeBuffer(view, 0, 8).getLong(0), "a buffer of one's own may wrap a view");
        }
    }

    private static String runProbe(final String... args) throws Exception {
        final ChildJvm.Result child = ChildJvm.run(Duration.ofSeconds(50),
            List.of("-XX:ErrorFile=" + System.getProperty("java.io.tmpdir") + "/jhca-stale-view-hs_err_%p.log"),
            StaleViewProbe.class, args);
        // 134 = SIGABRT after the JVM's SIGSEGV handler wrote its hs_err report
        assertEquals(0, child.exitValue(), "child JVM " + String.join(" ", args) + " died: " + child.head(12));
        return child.output();
    }
}
