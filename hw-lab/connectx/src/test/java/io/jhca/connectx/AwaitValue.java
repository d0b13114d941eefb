package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.fail;

import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/** Waits for a value another thread moves (a model counter, pages given) to reach what a test expects. */
final class AwaitValue {

    private AwaitValue() {
    }

    /** Spins until {@code actual} reads {@code expected}; fails with {@code what} after 20 s. */
    static void of(String what, long expected, LongSupplier actual) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (actual.getAsLong() != expected) {
            if (System.nanoTime() > deadline) {
                fail(what + ": " + actual.getAsLong() + ", expected " + expected + " within 20 s");
            }
            Thread.onSpinWait();
        }
    }
}
