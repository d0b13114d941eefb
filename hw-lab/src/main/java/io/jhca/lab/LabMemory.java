package io.jhca.lab;

import io.jhca.memory.DmaMemory;
import io.jhca.memory.DmaOptions;
import io.jhca.memory.DmaRegion;
import io.jhca.verbs.Context;

/** Buffers for the tools. */
public final class LabMemory {
    private LabMemory() {
    }

    /**
     * {@code bytes} of DMA memory for traffic on {@code ctx}, rounded up to a whole page. Hardware needs pinned
     * pages (mlock, bounded by RLIMIT_MEMLOCK); the rxe provider is software that copies through Java, so its
     * buffers are not locked and perf -a with 8 MiB messages runs under the default 8 MiB memlock limit.
     */
    public static DmaRegion allocate(Context ctx, long bytes) {
        boolean software = "rxe".equals(ctx.device().provider());
        return DmaMemory.allocate(DmaOptions.of(Math.max(bytes, 1)).lock(!software));
    }
}
