package io.jhca.lab;

/**
 * The idle step of every busy-wait in the tools: spin (PAUSE) while the wait is young, then yield the CPU on
 * every step. A latency test busy-polls on both sides, and with a software device its engine threads need CPU
 * too; on a machine with fewer cores than spinning threads, pure spinning would starve exactly the thread that
 * must make progress. Yielding only after {@value #SPINS_BEFORE_YIELD} idle steps (some microseconds, about a
 * round trip) keeps short waits at spin speed. 2^14 steps (hundreds of microseconds) held a core that an engine
 * thread needed for that long: an in-process write-lat with engine threads took 2.5-3 ms per round trip on two
 * loaded cores, 0.14-0.22 ms with 2^10.
 */
final class Spin {
    static final long SPINS_BEFORE_YIELD = 1 << 10;

    private Spin() {
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
