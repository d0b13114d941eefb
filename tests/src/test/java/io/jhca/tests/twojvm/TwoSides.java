package io.jhca.tests.twojvm;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The end of a namespace test's two child JVMs, which log to {@code a.log} and {@code b.log} in the test's folder:
 * whether both ended in time and what they wrote. The side whose end ends the exchange is waited for first, with the
 * longer bound; both are destroyed afterwards (a side still running has failed the test already), so no child
 * outlives it.
 */
record TwoSides(boolean done, String logA, String logB) {

    static TwoSides await(Path dir, Process first, long firstSeconds, Process second, long secondSeconds)
            throws Exception {
        boolean done = first.waitFor(firstSeconds, TimeUnit.SECONDS) & second.waitFor(secondSeconds, TimeUnit.SECONDS);
        first.destroyForcibly();
        second.destroyForcibly();
        return new TwoSides(done, Files.readString(dir.resolve("a.log")), Files.readString(dir.resolve("b.log")));
    }

    /** Both logs under their names, for a failure's message. */
    String labelled(String nameA, String nameB) {
        return nameA + ":\n" + logA + "\n" + nameB + ":\n" + logB;
    }
}
