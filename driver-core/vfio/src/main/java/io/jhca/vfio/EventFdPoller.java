package io.jhca.vfio;

import static io.jhca.vfio.VfioAbi.POLLFD_SIZE;
import static io.jhca.vfio.VfioAbi.POLLIN;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;

/**
 * A selector over several eventfds (interrupt vectors, or any {@link EventFd}): one poll(2) waits for any of
 * them, and each ready one is handed to a callback, which reads it with {@link EventFd#poll()}. For event loops
 * that own a thread; a loop built on epoll or on another library can take {@link EventFd#fd()} instead.
 * {@link #select} allocates nothing. One thread at a time.
 */
public final class EventFdPoller {

    private final Syscalls sys;
    private final List<EventFd> members = new ArrayList<>();
    private NativeStruct pollfds = new NativeStruct(POLLFD_SIZE);

    public EventFdPoller() {
        this(Syscalls.linux());
    }

    EventFdPoller(final Syscalls sys) {
        this.sys = sys;
    }

    /** Watches {@code eventFd} from now on. */
    public void add(final EventFd eventFd) {
        eventFd.ensureOpen("poll");
        if (!members.contains(eventFd)) {
            members.add(eventFd);
            if (members.size() * POLLFD_SIZE > pollfds.size()) {
                pollfds = new NativeStruct(members.size() * 2 * POLLFD_SIZE);
            }
        }
    }

    /** Stops watching {@code eventFd}. */
    public void remove(final EventFd eventFd) {
        members.remove(eventFd);
    }

    /** Eventfds watched. */
    public int size() {
        return members.size();
    }

    /**
     * Waits up to {@code timeoutMillis} (negative: forever) until at least one eventfd is signalled, then calls
     * {@code ready} for each signalled one.
     *
     * @return how many were ready, 0 on timeout (or when interrupted by a signal)
     */
    public int select(final long timeoutMillis, final Consumer<EventFd> ready) {
        final int n = members.size();
        for (int i = 0; i < n; i++) {
            final int at = i * POLLFD_SIZE;
            pollfds.buffer.putInt(at, members.get(i).fd());
            pollfds.buffer.putShort(at + 4, POLLIN);
            pollfds.buffer.putShort(at + 6, (short) 0);
        }
        final int r = sys.poll(pollfds.address(), n, (int) Math.max(-1, Math.min(Integer.MAX_VALUE, timeoutMillis)));
        if (r < 0) {
            final int errno = sys.errno();
            if (errno == Errno.EINTR) {
                return 0;
            }
            throw new VfioException("eventfd poller", "poll", errno, null);
        }
        int count = 0;
        for (int i = 0; i < n && r > 0; i++) {
            if ((pollfds.buffer.getShort(i * POLLFD_SIZE + 6) & POLLIN) != 0) {
                count++;
                ready.accept(members.get(i));
            }
        }
        pollfds.keepAlive();
        return count;
    }
}
