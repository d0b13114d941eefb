package io.jhca.rxe.link;

import java.nio.ByteBuffer;
import java.util.concurrent.locks.LockSupport;

import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import jnr.ffi.LastError;
import jnr.ffi.Runtime;

/**
 * Where an idle engine thread sleeps: in ppoll(2) on its link's sockets and an eventfd, so that a datagram's
 * arrival, or a post that calls {@link #wake()}, ends the sleep at once. A park (LockSupport) lasted its whole time
 * whatever came in the meantime: after 2 ms of quiet an engine parked up to 1 ms, so a request to a quiet device
 * waited up to that long on each side, and each ACK again.
 *
 * <p>Native layouts (Linux, asm-generic/poll.h, linux/time.h): struct pollfd is 8 bytes (int fd, short events,
 * short revents), struct timespec 16 bytes on LP64 (tv_sec, tv_nsec). The eventfd is non-blocking (EFD_NONBLOCK), so
 * the drain after a wake never blocks. {@link #await} is for the engine thread only; {@link #wake} is for any
 * thread, and never writes to a descriptor after {@link #close} (which would reach whatever file reused its number).
 */
public final class KernelWait implements AutoCloseable {

    /** EFD_NONBLOCK, EFD_CLOEXEC (sys/eventfd.h: O_NONBLOCK 04000, O_CLOEXEC 02000000). */
    static final int EFD_NONBLOCK = 0x800;
    static final int EFD_CLOEXEC = 0x80000;
    /** POLLIN (asm-generic/poll.h). */
    static final short POLLIN = 0x1;
    static final int POLLFD_SIZE = 8;
    static final int POLLFD_EVENTS = 4;
    static final int POLLFD_REVENTS = 6;
    /** Control block: timespec at 0 (16 bytes), the drain's counter at 16, the wake's constant 1 at 24. */
    private static final int TIMESPEC = 0;
    private static final int DRAINED = 16;
    private static final int ONE = 24;
    private static final int CONTROL_SIZE = 32;
    /**
     * The longest park where nothing can end it early (a link with no sockets to wait on, or no eventfd for the
     * posts): it bounds how late such a link's datagram or a post is seen.
     */
    public static final long PARK_CAP_NANOS = 1_000_000L;

    private final NativeSocket.LibC libc;
    private final int eventFd;
    private final ByteBuffer controlMemory;
    private final UnsafeBuffer control;
    private ByteBuffer pollMemory;
    private UnsafeBuffer pollFds;
    private int[] linkFds = new int[4];
    /** Guarded by this: set by close, read by wake before its write. */
    private boolean closed;

    private KernelWait(final NativeSocket.LibC libc, final int eventFd) {
        this.libc = libc;
        this.eventFd = eventFd;
        this.controlMemory = BufferUtil.allocateDirectAligned(CONTROL_SIZE, 64);
        this.control = new UnsafeBuffer(controlMemory);
        control.putLong(ONE, 1L);
        grow(linkFds.length + 1);
    }

    /** A new wait with its eventfd; throws IllegalStateException if the kernel refuses one. */
    public static KernelWait open() {
        final NativeSocket.LibC c = NativeSocket.libc();
        final int fd = c.eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (fd < 0) {
            final int errno = LastError.getLastError(Runtime.getRuntime(c));
            throw new IllegalStateException("eventfd failed: errno " + errno + " (" + c.strerror(errno) + ")");
        }
        return new KernelWait(c, fd);
    }

    /**
     * Sleeps until one of {@code link}'s sockets has a datagram, {@link #wake()} is called (also before this call,
     * since the last await), or {@code nanos} pass. A link that has no sockets to wait on ({@link Link#pollFds})
     * parks instead, at most {@link #PARK_CAP_NANOS}. Returns true if something ended the sleep before its time.
     * Engine thread only.
     */
    public boolean await(final Link link, final long nanos) {
        int n = link.pollFds(linkFds);
        if (n > linkFds.length) {
            linkFds = new int[n];
            n = link.pollFds(linkFds);
        }
        if (n < 0 || n > linkFds.length) {
            LockSupport.parkNanos(Math.min(nanos, PARK_CAP_NANOS));
            return false;
        }
        if ((n + 1) * POLLFD_SIZE > pollFds.capacity()) {
            grow(n + 1);
        }
        for (int i = 0; i < n; i++) {
            pollFd(i, linkFds[i]);
        }
        pollFd(n, eventFd);
        control.putLong(TIMESPEC, nanos / 1_000_000_000L);
        control.putLong(TIMESPEC + 8, nanos % 1_000_000_000L);
        final int ready = libc.ppoll(pollFds.addressOffset(), n + 1, control.addressOffset() + TIMESPEC, 0L);
        if (ready > 0 && pollFds.getShort(n * POLLFD_SIZE + POLLFD_REVENTS) != 0) {
            libc.read(eventFd, control.addressOffset() + DRAINED, 8);
        }
        return ready > 0;
    }

    /** Ends the current or the next {@link #await} at once (any thread; nothing after close). */
    public void wake() {
        synchronized (this) {
            if (!closed) {
                libc.write(eventFd, control.addressOffset() + ONE, 8);
            }
        }
    }

    @Override
    public void close() {
        synchronized (this) {
            if (!closed) {
                closed = true;
                libc.close(eventFd);
            }
        }
    }

    private void pollFd(final int i, final int fd) {
        final int at = i * POLLFD_SIZE;
        pollFds.putInt(at, fd);
        pollFds.putShort(at + POLLFD_EVENTS, POLLIN);
        pollFds.putShort(at + POLLFD_REVENTS, (short) 0);
    }

    private void grow(final int entries) {
        pollMemory = BufferUtil.allocateDirectAligned(Math.max(entries, 8) * POLLFD_SIZE, 64);
        pollFds = new UnsafeBuffer(pollMemory);
    }
}
