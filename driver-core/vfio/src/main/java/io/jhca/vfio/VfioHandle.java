package io.jhca.vfio;

/**
 * What a VFIO object holding a file descriptor (a group, a device) does with it: refuses every call once closed
 * (naming the call and the object), and closes in one order: {@link #releaseResources} under the object's lock,
 * then the fd, then {@link #afterClose} outside the lock (telling the parent). Every step runs even when one
 * fails; the first failure is thrown at the end. Closing twice is harmless. The fields are guarded by the object's
 * lock.
 */
abstract class VfioHandle implements AutoCloseable {

    final Syscalls sys;
    /** The object's name in messages: "group 12", "0000:03:00.0". */
    final String name;
    /** "group" or "device", for messages. */
    private final String kind;
    int fd;
    boolean closed;

    VfioHandle(final Syscalls sys, final String name, final int fd, final String kind) {
        this.sys = sys;
        this.name = name;
        this.fd = fd;
        this.kind = kind;
    }

    /** Under the lock, before the fd closes: lets go of what hangs on the fd; returns the first failure. */
    abstract RuntimeException releaseResources(RuntimeException failure);

    /** Outside the lock, after the fd closed: tells the parent; {@code failure} is what close will throw. */
    abstract void afterClose(RuntimeException failure);

    public synchronized boolean isClosed() {
        return closed;
    }

    final void ensureOpen(final String call) {
        if (closed) {
            throw VfioException.refused(name, call, "the " + kind + " is closed");
        }
    }

    @Override
    public final void close() {
        RuntimeException failure;
        synchronized (this) {
            if (closed) {
                return;
            }
            failure = closeFd(releaseResources(null));
        }
        afterClose(failure);
        if (failure != null) {
            throw failure;
        }
    }

    /** Marks the object closed and closes its fd (also when opening it failed half way); returns the first failure. */
    final synchronized RuntimeException closeFd(final RuntimeException failure) {
        closed = true;
        final int f = fd;
        fd = -1;
        return Cleanup.run(failure, () -> {
            if (f >= 0 && sys.close(f) < 0) {
                throw new VfioException(name, "close", sys.errno(), null);
            }
        });
    }
}
