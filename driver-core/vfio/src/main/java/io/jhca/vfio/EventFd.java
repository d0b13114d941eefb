package io.jhca.vfio;

import static io.jhca.vfio.VfioAbi.*;

/**
 * A non-blocking eventfd, the kernel's counter that VFIO signals when an interrupt vector fires (and that
 * anyone may signal by writing to it). {@link #await(long)} waits with a timeout, {@link #poll()} checks
 * without waiting (for polling loops), and {@link #fd()} hands the fd to an event loop (epoll, or
 * {@link EventFdPoller}). Reading returns and clears the count of signals since the last read.
 *
 * <p>{@link #poll()} and {@link #await(long)} allocate nothing; one thread at a time polls or awaits.
 * {@link #signal(long)} is safe from any thread, also while the owner polls: it writes from a struct of its own, and
 * it and the close hold this object's monitor, so a signal never reaches an fd number that the close released (and
 * the kernel may have given to someone else); {@link #signalIfOpen} is the same for a waker that may outlive it.
 */
public class EventFd implements AutoCloseable {

    private final Syscalls sys;
    private final String owner;
    /** What poll() reads into: the owner's. */
    private final NativeStruct counter = new NativeStruct(8);
    /** What signal() writes from, under the monitor: a signal must not share the owner's buffer. */
    private final NativeStruct increment = new NativeStruct(8);
    private final NativeStruct pollfd = new NativeStruct(POLLFD_SIZE);
    private int fd;

    EventFd(final Syscalls sys, final String owner) {
        this.sys = sys;
        this.owner = owner;
        final int f = sys.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (f < 0) {
            throw new VfioException(owner, "eventfd", sys.errno(), null);
        }
        this.fd = f;
    }

    /** A new eventfd on the real kernel. */
    public static EventFd create() {
        return new EventFd(Syscalls.linux(), "eventfd");
    }

    /** The fd, for an event loop. */
    public final int fd() {
        ensureOpen("fd");
        return fd;
    }

    /** Signals since the last read, or 0 when there were none; never waits. */
    public final long poll() {
        ensureOpen("read");
        final long n = sys.read(fd, counter.address(), 8);
        if (n == 8) {
            return counter.buffer.getLong(0);
        }
        final int errno = sys.errno();
        if (n < 0 && errno == Errno.EAGAIN) {
            return 0;
        }
        throw new VfioException(owner, "read eventfd", n < 0 ? errno : Errno.EIO, null);
    }

    /**
     * Waits up to {@code timeoutMillis} (0: do not wait, negative: forever) for a signal.
     *
     * @return the signals counted (and cleared), 0 on timeout
     */
    public final long await(final long timeoutMillis) {
        ensureOpen("poll");
        final long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : 0;
        long wait = timeoutMillis;
        while (true) {
            pollfd.buffer.putInt(0, fd);
            pollfd.buffer.putShort(4, POLLIN);
            pollfd.buffer.putShort(6, (short) 0);
            final int r = sys.poll(pollfd.address(), 1, (int) Math.min(Integer.MAX_VALUE, wait < 0 ? -1 : wait));
            if (r > 0) {
                final long n = poll();
                if (n > 0) {
                    return n;
                }
            } else if (r < 0 && sys.errno() != Errno.EINTR) {
                throw new VfioException(owner, "poll eventfd", sys.errno(), null);
            } else if (r == 0 && timeoutMillis >= 0) {
                return 0;
            }
            if (timeoutMillis > 0) {
                wait = Math.max(0, (deadline - System.nanoTime()) / 1_000_000L);
            }
        }
    }

    /**
     * Adds {@code count} to the counter (wakes a waiter; for tests and for waking an event loop). Any thread; throws
     * when the eventfd is closed.
     */
    public final synchronized void signal(final long count) {
        ensureOpen("write");
        increment.buffer.putLong(0, count);
        final long n = sys.write(fd, increment.address(), 8);
        if (n != 8) {
            throw new VfioException(owner, "write eventfd", n < 0 ? sys.errno() : Errno.EIO, null);
        }
    }

    /**
     * As {@link #signal}, but does nothing once the eventfd is closed: for waking an owner that may have closed it
     * already. Returns whether it signalled. Any thread.
     */
    public final synchronized boolean signalIfOpen(final long count) {
        if (fd < 0) {
            return false;
        }
        signal(count);
        return true;
    }

    public final boolean isClosed() {
        return fd < 0;
    }

    final void ensureOpen(final String call) {
        if (fd < 0) {
            throw VfioException.refused(owner, call, "the eventfd is closed");
        }
    }

    /** Closes the fd. Closing twice is harmless. */
    @Override
    public void close() {
        closeFd();
    }

    /** Under the monitor, as {@link #signal} is: a signal either writes before the close(2) or finds the fd closed. */
    final synchronized void closeFd() {
        final int f = fd;
        if (f < 0) {
            return;
        }
        fd = -1;
        if (sys.close(f) < 0) {
            throw new VfioException(owner, "close eventfd", sys.errno(), null);
        }
    }
}
