package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

import org.junit.jupiter.api.Test;

import io.jhca.doorbell.MmioWindow;
import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.Mlx5Context;
import io.jhca.mlx5.Mlx5Provider;
import io.jhca.mlx5.init.Mlx5Options;
import io.jhca.mlx5.spi.InterruptLine;
import io.jhca.mlx5.spi.Mlx5Function;
import io.jhca.verbs.CompletionQueue;
import io.jhca.verbs.DeviceInfo;
import io.jhca.verbs.ProtectionDomain;

/**
 * The async EQ driven by its interrupt, as over vfio with MSI-X: the driver's event thread arms the EQ and sleeps on
 * the function's interrupt line, the model raises vector 0 when an armed EQ gets an entry (command completions, page
 * requests), and every command still completes. Without a line the EQ is polled and never raises anything.
 */
class EqInterruptTest {

    /** The function as the driver sees it, counting the wake-ups its interrupt line gives the event thread. */
    private static final class CountingFunction implements Mlx5Function {
        final ModelFunction f;
        final AtomicLong wakeUps = new AtomicLong();
        final AtomicLong lineWakeUps = new AtomicLong();
        /** The model's raise count when the line was last woken (by the driver's stop, in the close test). */
        final AtomicLong raisedAtWakeUp = new AtomicLong(-1);
        /** Set: the next wait ends as a timeout just after the model's next raise, whose signal it leaves pending. */
        volatile CountDownLatch timeoutWinsNext;

        CountingFunction(ModelFunction f) {
            this.f = f;
        }

        @Override
        public String name() {
            return f.name();
        }

        @Override
        public String location() {
            return f.location();
        }

        @Override
        public MmioWindow bar0() {
            return f.bar0();
        }

        @Override
        public DmaRegion allocateDma(long bytes) {
            return f.allocateDma(bytes);
        }

        @Override
        public void mapForDevice(DmaRegion region) {
            f.mapForDevice(region);
        }

        @Override
        public void unmapForDevice(DmaRegion region) {
            f.unmapForDevice(region);
        }

        @Override
        public List<InetAddress> portAddresses() {
            return f.portAddresses();
        }

        @Override
        public InterruptLine eqInterrupt() {
            InterruptLine line = f.eqInterrupt();
            if (line == null) {
                return null;
            }
            return new InterruptLine() {
                @Override
                public boolean await(long timeoutMillis) {
                    CountDownLatch racing = timeoutWinsNext;
                    if (racing != null) {
                        timeoutWinsNext = null;
                        return timeoutJustAfterTheNextRaise(racing);
                    }
                    boolean fired = line.await(timeoutMillis);
                    if (fired) {
                        wakeUps.incrementAndGet();
                    }
                    return fired;
                }

                @Override
                public void wakeUp() {
                    raisedAtWakeUp.set(f.interruptsRaised());
                    lineWakeUps.incrementAndGet();
                    line.wakeUp();
                }

                @Override
                public String describe() {
                    return line.describe();
                }
            };
        }

        @Override
        public void close() {
            f.close();
        }

        /** The wait's timeout and the interrupt at once: the raise happened, the waiter saw a timeout. */
        private boolean timeoutJustAfterTheNextRaise(CountDownLatch racing) {
            long raised = f.interruptsRaised();
            racing.countDown();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (f.interruptsRaised() == raised && System.nanoTime() < deadline) {
                LockSupport.parkNanos(100_000);
            }
            return false;
        }
    }

    /** Commands after bring-up: each completion is a CMD entry on the async EQ. */
    private static void commands(Mlx5Context ctx) {
        for (int i = 0; i < 20; i++) {
            ProtectionDomain pd = ctx.allocatePd();
            CompletionQueue cq = ctx.createCq(16);
            cq.close();
            pd.close();
        }
    }

    @Test
    void theEventThreadSleepsOnTheInterruptAndCommandsComplete() throws Exception {
        ModelFunction model = ModelFunction.open("irq0", InetAddress.getByName("127.0.0.42")).withInterrupts();
        CountingFunction fn = new CountingFunction(model);
        try (Mlx5Context ctx = Mlx5Provider.open(new DeviceInfo("irq0", "mlx5", 0, "InfiniBand"), fn,
                Mlx5Options.defaults())) {
            long raised = model.interruptsRaised();
            commands(ctx);
            long deadline = System.nanoTime() + 20_000_000_000L;
            while ((fn.wakeUps.get() == 0 || ctx.commandInterrupts() == 0) && System.nanoTime() < deadline) {
                commands(ctx);
            }
            // the last command's raise may trail its completion, and the wrapper counts a wake-up just before the
            // context does: compare the counts once both have settled
            awaitQuiet(model, ctx, "irq0-events");
            assertTrue(model.interruptsRaised() > raised, "the model raised vector 0 for the armed EQ");
            assertTrue(fn.wakeUps.get() > 0, "the event thread was woken by the interrupt");
            assertTrue(fn.wakeUps.get() <= model.interruptsRaised(), "no wake-up without an interrupt");
            assertEquals(fn.wakeUps.get(), ctx.eqInterrupts(), "the context counts the wake-ups the line saw");
            assertTrue(ctx.commandInterrupts() > 0 && ctx.commandInterrupts() <= ctx.eqInterrupts(),
                    "wake-ups that found command completions: " + ctx.commandInterrupts());
        }
    }

    /**
     * The race the VM test met: the event thread's wait times out just as the interrupt for a command's completion is
     * raised. The entry must still be read after an interrupt (the next arm raises the vector again for it), so it
     * counts as having come by interrupt; read at the timeout, it would not, and the interrupt would wake the thread
     * to an empty EQ.
     */
    @Test
    void anEntryWhoseInterruptLostTheRaceWithTheTimeoutIsReadAfterAnInterrupt() throws Exception {
        ModelFunction model = ModelFunction.open("irq4", InetAddress.getByName("127.0.0.49")).withInterrupts();
        CountingFunction fn = new CountingFunction(model);
        try (Mlx5Context ctx = Mlx5Provider.open(new DeviceInfo("irq4", "mlx5", 0, "InfiniBand"), fn,
                Mlx5Options.defaults())) {
            awaitQuiet(model, ctx, "irq4-events");
            CountDownLatch racing = new CountDownLatch(1);
            fn.timeoutWinsNext = racing;
            model.eqInterrupt().wakeUp(); // ends the current wait, so the next one is the racing one
            assertTrue(racing.await(10, TimeUnit.SECONDS), "the event thread waited again");
            long cmd = ctx.commandInterrupts();
            long eq = ctx.eqInterrupts();
            try (ProtectionDomain pd = ctx.allocatePd()) {
                // ALLOC_PD's completion entry raised the vector while the racing wait ran; the re-arm's raise comes
                // from the model's thread, so wait for the count (bounded) rather than for quiet
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (ctx.commandInterrupts() == cmd && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertEquals(cmd + 1, ctx.commandInterrupts(), "the entry was read after an interrupt; wake-ups "
                        + (ctx.eqInterrupts() - eq) + ", model raises " + model.interruptsRaised());
            }
        }
    }

    @Test
    void aWakeUpEndsTheWaitWithoutCountingAsAnInterrupt() throws Exception {
        try (ModelFunction model = ModelFunction.open("irq2", InetAddress.getByName("127.0.0.47")).withInterrupts()) {
            InterruptLine line = model.eqInterrupt();
            line.wakeUp();
            // a wait of ten minutes (the test's own timeout is one): only the wake-up can end it
            assertFalse(line.await(600_000), "a wake-up is not an interrupt");
            assertEquals(0, model.interruptsRaised());
            assertFalse(line.await(0), "it was consumed");
        }
    }

    @Test
    void closingTheDeviceWakesTheEventThreadsWait() throws Exception {
        ModelFunction model = ModelFunction.open("irq3", InetAddress.getByName("127.0.0.48")).withInterrupts();
        CountingFunction fn = new CountingFunction(model);
        Mlx5Context ctx = Mlx5Provider.open(new DeviceInfo("irq3", "mlx5", 0, "InfiniBand"), fn, Mlx5Options.defaults());
        awaitWaiting("irq3-events");   // in its wait on the line, the case the wake-up is for
        awaitQuiet(model, ctx, "irq3-events");
        long raised = model.interruptsRaised();
        long interrupts = ctx.eqInterrupts();
        ctx.close();
        assertTrue(fn.lineWakeUps.get() > 0, "the stop woke the line (else the event thread sleeps out its wait)");
        // the close's teardown commands raise the vector again after the stop: only raises before the stop count
        long counted = ctx.eqInterrupts() - interrupts;
        long raisedBeforeStop = fn.raisedAtWakeUp.get() - raised;
        assertTrue(counted <= raisedBeforeStop, "the stop's wake-up is no interrupt: " + counted
                + " counted while the close ran, " + raisedBeforeStop + " raised before the stop");
    }

    /**
     * Waits (bounded) until the model has raised nothing for 50 ms and the event thread waits on its line: every
     * raise so far has then been seen, counted or merged, so a count taken now moves only for a raise after it. The
     * model completes a command before it writes the command's EQE and raises the vector, so a raise can trail the
     * last command the driver saw complete.
     */
    private static void awaitQuiet(ModelFunction model, Mlx5Context ctx, String thread) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        long raised = -1;
        long interrupts = -1;
        long quietSince = System.nanoTime();
        while (System.nanoTime() < deadline) {
            long r = model.interruptsRaised();
            long i = ctx.eqInterrupts();
            if (r != raised || i != interrupts) {
                raised = r;
                interrupts = i;
                quietSince = System.nanoTime();
            } else if (System.nanoTime() - quietSince > 50_000_000L) {
                awaitWaiting(thread);
                if (model.interruptsRaised() == raised && ctx.eqInterrupts() == interrupts) {
                    return;
                }
            }
            Thread.sleep(1);
        }
        throw new AssertionError("the model never went quiet: " + raised + " raised, " + interrupts + " counted");
    }

    /** Waits (bounded) until the thread named {@code name} is in a timed wait. */
    private static void awaitWaiting(String name) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (System.nanoTime() < deadline) {
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                if (t.getName().equals(name) && t.getState() == Thread.State.TIMED_WAITING) {
                    return;
                }
            }
            Thread.sleep(1);
        }
        throw new AssertionError(name + " never waited");
    }

    @Test
    void withoutALineTheEqIsPolledAndNeverArmed() throws Exception {
        ModelFunction model = ModelFunction.open("irq1", InetAddress.getByName("127.0.0.43"));
        AtomicLong raised = new AtomicLong();
        model.model().interrupts(v -> raised.incrementAndGet()); // listen although the driver has no line
        assertNull(model.eqInterrupt());
        try (Mlx5Context ctx = Mlx5Provider.open(new DeviceInfo("irq1", "mlx5", 0, "InfiniBand"), model,
                Mlx5Options.defaults())) {
            commands(ctx);
            assertEquals(0, ctx.eqInterrupts());
            assertEquals(0, ctx.commandInterrupts());
        }
        assertEquals(0, raised.get(), "a polling driver never arms the EQ, so nothing is raised");
    }
}
