package io.jhca.lab;

/**
 * The idle step of every busy-wait in the tools: spin (PAUSE) while the wait is young, then yield the CPU on
 * every step. A latency test busy-polls on both sides, and with a software device its engine threads need CPU
 * too; on a machine with fewer cores than spinning threads, pure spinning would starve exactly the thread that
 * must make progress. Yielding only after {@value #SPINS_BEFORE_YIELD} idle steps (a step that drives a
 * software device's progress is a receive system call, so some tens of microseconds; a few microseconds of
 * pure spinning) keeps the waits of a round trip at spin speed. More steps held a core that another thread
 * needed for that long: an in-process write-lat with engine threads took 2.5-3 ms per round trip on two
 * loaded cores with 2^14 steps, 0.14 ms with 2^10, 0.04 ms with 2^7; with caller progress, when the scheduler
 * put both sides on one core, 2^10 steps made every half round trip 350 us.
 */
final class Spin {
    static final long SPINS_BEFORE_YIELD = 1 << 7;

    private Spin() {
    }

    /**
     * Waits {@code nanos} in idle steps (--latency_gap, perftest's spin before a post), driving {@code device}'s
     * progress at each step when it is not null (a software device in caller progress moves nothing otherwise).
     */
    static void forNanos(long nanos, io.jhca.verbs.Context device) {
        if (nanos <= 0) {
            return;
        }
        long end = System.nanoTime() + nanos;
        for (long spins = 1; System.nanoTime() - end < 0; spins++) {
            if (device != null) {
                device.progress();
            }
            idle(spins);
        }
    }

    /** A wait's stall timeout in nanoseconds from the tools' milliseconds ({@code --stall-timeout}; 0: none). */
    static long stallNanos(long stallMillis) {
        return stallMillis <= 0 ? Long.MAX_VALUE : stallMillis * 1_000_000L;
    }

    /** One idle step of a wait that has been idle for {@code spins} steps so far. */
    static void idle(long spins) {
        if (spins < SPINS_BEFORE_YIELD) {
            Thread.onSpinWait();
        } else {
            Thread.yield();
        }
    }
}
