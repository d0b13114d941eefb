package io.jhca.memory;

/**
 * Run in a child JVM with a 64 KiB RLIMIT_MEMLOCK and without CAP_IPC_LOCK (see {@link LockLimitTest}):
 * prints what a locked 1 MiB allocation and an unlocked one do.
 */
public final class LockLimitProbe {

    private LockLimitProbe() {
    }

    public static void main(final String[] args) {
        try (DmaRegion region = DmaMemory.allocate(1 << 20)) {
            System.out.println("LOCKED-ALLOCATED " + region);
        } catch (final DmaMemoryException e) {
            System.out.println("LOCKED-FAILED " + e.getMessage());
        }
        try (DmaRegion region = DmaMemory.allocate(DmaOptions.of(1 << 20).lock(false))) {
            region.buffer().putLong(0, 1);
            System.out.println("UNLOCKED-ALLOCATED");
        } catch (final DmaMemoryException e) {
            System.out.println("UNLOCKED-FAILED " + e.getMessage());
        }
    }
}
