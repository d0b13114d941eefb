package io.jhca.mlx5.vfio;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import io.jhca.mlx5.spi.InterruptLine;
import io.jhca.vfio.EventFd;
import io.jhca.vfio.EventFdPoller;

/**
 * The async EQ's interrupt line of a vfio function: MSI-X vector 0's eventfd, and a second eventfd of the line's own,
 * the wake fd. The event thread's {@link #await} waits on both with one poll(2), so a {@link #wakeUp} (the driver's
 * stop, a page request another thread met) ends the wait at once instead of at its timeout. The vector's eventfd is
 * the function's; {@link #close} closes the wake fd only.
 */
final class EqInterruptLine implements InterruptLine, AutoCloseable {

    private final EventFd vector;
    private final EventFd wake = EventFd.create();
    private final EventFdPoller poller = new EventFdPoller();
    /** Reads each eventfd the poll found ready; held here so that an await allocates nothing. */
    private final Consumer<EventFd> drain = this::drain;
    /** Set by {@link #drain} during one await: the waiter's own. */
    private boolean fired;
    private boolean woken;
    /** Awaits that found the wake fd signalled; written by the waiter, read by anyone. */
    private final AtomicLong wakeUps = new AtomicLong();

    EqInterruptLine(EventFd vector) {
        this.vector = vector;
        poller.add(vector);
        poller.add(wake);
    }

    /** Waits for the vector or a wake-up; true only when the vector fired (both drained when both are ready). */
    @Override
    public boolean await(long timeoutMillis) {
        fired = false;
        woken = false;
        poller.select(Math.max(1, timeoutMillis), drain);
        if (woken) {
            wakeUps.incrementAndGet();
        }
        return fired;
    }

    private void drain(EventFd ready) {
        long n = ready.poll();
        if (ready == vector) {
            fired |= n > 0;
        } else {
            woken |= n > 0;
        }
    }

    /** Signals the wake fd, from any thread; nothing once the function (so the line) is closed. */
    @Override
    public void wakeUp() {
        wake.signalIfOpen(1);
    }

    /** Awaits that a {@link #wakeUp} ended (or that drained one left before them). */
    long wakeUps() {
        return wakeUps.get();
    }

    @Override
    public String describe() {
        return "MSI-X vector 0 (eventfd " + vector.fd() + ", wake eventfd " + wake.fd() + ")";
    }

    /** Closes the wake fd; the vector's eventfd is closed with the function's interrupt. */
    @Override
    public void close() {
        wake.close();
    }
}
