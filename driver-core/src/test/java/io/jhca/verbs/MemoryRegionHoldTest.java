package io.jhca.verbs;

import io.jhca.memory.DmaRegion;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A held MR cannot be deregistered, nor its region closed, until the hold ends; a closed MR refuses holds. */
class MemoryRegionHoldTest extends VerbsTestSupport {

    @Test
    void deregistrationWaitsForTheHoldAndRefusesNewOnes() throws Exception {
        ProtectionDomain pd = track(ctx.allocatePd());
        DmaRegion mem = memory(4096);
        MemoryRegion mr = pd.register(mem, Access.LOCAL_WRITE);
        assertTrue(mr.hold());
        Thread closer = new Thread(() -> {
            mr.close();
            mem.close();
        }, "closer");
        closer.start();
        // the closer cannot get past the hold: the memory stays registered and mapped (no time is asserted:
        // if the hold did not block, the closer would be done and the checks below would fail)
        closer.join(TimeUnit.MILLISECONDS.toMillis(200));
        assertTrue(closer.isAlive(), "deregistration went ahead under a hold");
        assertFalse(mr.isClosed());
        assertFalse(mem.isClosed());
        mem.buffer(0, 8).putLong(0, 42);
        mr.unhold();
        closer.join();
        assertTrue(mr.isClosed());
        assertTrue(mem.isClosed());
        assertFalse(mr.hold(), "a deregistered MR takes no hold");
        assertThrows(IllegalStateException.class, () -> mem.buffer(0, 8));
    }
}
