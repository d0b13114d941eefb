package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.net.InetAddress;

import org.junit.jupiter.api.Test;

import io.jhca.doorbell.UarDoorbell;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.Mlx5Provider;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.verbs.DeviceInfo;

/**
 * An idle in-process function's firmware thread sleeps in the kernel, and what needs it ends the sleep at once rather
 * than at its next timer: the driver's store to BAR0 (here the command doorbell) and a request from another thread.
 * A sleep cut short is counted ({@link ModelSleeper#sleepCounts}); without the wake the work would still be done at
 * the next health tick, but no sleep would end early, so these counts are what the tests check.
 */
class ModelSleepTest {

    private static final int ATTEMPTS = 20;

    /**
     * Waits (bounded) until the firmware thread sleeps in the kernel: a sleep that began after this call and still
     * lasts a millisecond later (a wake can only cut a sleep short that has begun). The sleeping flag alone is not
     * enough: it is raised before the sleep's last look for work, which takes a request that comes then without
     * sleeping at all; under load a caller that sent its request the moment it saw the flag met that window on all
     * 20 tries. And a wake that came then leaves the eventfd readable, ending the next sleep at once, hence the
     * millisecond. Sleeps last at most the health counter's tick (10 ms).
     */
    static void awaitAsleep(ModelSleeper sleeper) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        long after = sleeper.sleepCounts()[0];
        while (System.nanoTime() < deadline) {
            long sleeps = sleeper.sleepCounts()[0];
            if (sleeps > after && sleeper.asleep()) {
                Thread.sleep(1);
                if (sleeper.sleepCounts()[0] == sleeps && sleeper.asleep()) {
                    return;
                }
                after = sleeper.sleepCounts()[0];   // that one ended: wait for the next
            } else {
                Thread.sleep(0, 100_000);
            }
        }
        fail("the idle firmware thread did not sleep in the kernel for a millisecond within 10 s; sleeps "
                + sleeper.sleepCounts()[0] + ", asleep " + sleeper.asleep());
    }

    /**
     * ALLOC_PD (its command doorbell is a write to BAR0) while the firmware sleeps, until one ends a sleep early: a
     * sleep may end for its timer just as the command comes, so a few tries, and one early end is enough.
     */
    private static void commandsEndASleepEarly(Mlx5Context ctx, ModelSleeper sleeper) throws InterruptedException {
        long early = sleeper.sleepCounts()[1];
        for (int i = 0; i < ATTEMPTS && sleeper.sleepCounts()[1] == early; i++) {
            awaitAsleep(sleeper);
            ctx.allocatePd().close();
        }
        assertTrue(sleeper.sleepCounts()[1] > early, "a command doorbell cut a sleep short");
    }

    @Test
    void aCommandDoorbellEndsTheFirmwaresSleep() throws Exception {
        ModelFunction f = ModelFunction.open("sleep0", InetAddress.getByName("127.0.0.44"));
        try (Mlx5Context ctx = Mlx5Provider.open(new DeviceInfo("sleep0", "mlx5", 0, "InfiniBand"), f,
                Mlx5Options.defaults())) {
            ModelSleeper sleeper = f.model().sleeper();
            commandsEndASleepEarly(ctx, sleeper);
            assertTrue(sleeper.sleepCounts()[0] > 0, "the firmware slept");
            assertEquals(0, f.model().counters().get(ModelCounters.Counter.MODEL_ERRORS));
        }
    }

    @Test
    void withTheDataPathPausedUarStoresLetItSleepAndCommandsStillWakeIt() throws Exception {
        ModelFunction f = ModelFunction.open("sleep2", InetAddress.getByName("127.0.0.46"));
        try (Mlx5Context ctx = Mlx5Provider.open(new DeviceInfo("sleep2", "mlx5", 0, "InfiniBand"), f,
                Mlx5Options.defaults())) {
            ModelSleeper sleeper = f.model().sleeper();
            f.model().pauseDataPath(true);   // what a benchmark does: it rings doorbells nothing serves
            awaitAsleep(sleeper);
            long early = sleeper.sleepCounts()[1];
            int doorbell = 2 * UarDoorbell.UAR_PAGE_SIZE + UarDoorbell.BF_OFFSET;   // a send doorbell of UAR page 2
            for (int i = 0; i < 1000; i++) {
                f.bar0().putDoorbellBe(doorbell, 0);
            }
            assertEquals(early, sleeper.sleepCounts()[1], "no UAR store of a paused data path woke the firmware");
            commandsEndASleepEarly(ctx, sleeper);   // commands go on while the data path is paused
            f.model().pauseDataPath(false);
        }
    }

    @Test
    void aRequestFromAnotherThreadEndsTheFirmwaresSleep() throws Exception {
        try (ModelFunction f = ModelFunction.open("sleep1", InetAddress.getByName("127.0.0.45"))) {
            ModelSleeper sleeper = f.model().sleeper();
            long early = sleeper.sleepCounts()[1];
            for (int i = 0; i < ATTEMPTS && sleeper.sleepCounts()[1] == early; i++) {
                awaitAsleep(sleeper);
                f.model().pauseDataPath(true);   // runs on the firmware thread: waits for it
                f.model().pauseDataPath(false);
            }
            assertTrue(sleeper.sleepCounts()[1] > early, "a request cut a sleep short");
        }
    }
}
