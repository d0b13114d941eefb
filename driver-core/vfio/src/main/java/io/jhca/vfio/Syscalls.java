package io.jhca.vfio;

/**
 * The kernel calls the VFIO layer makes, and nothing else, so that tests can put a fake kernel underneath
 * (one that fails the Nth call, or counts open fds and mappings). Each call returns what the C function
 * returns (-1 on failure) and leaves the failure's errno for {@link #errno()}, read on the same thread right
 * after the call. Struct arguments are passed as the address of off-heap memory the caller owns.
 */
public interface Syscalls {

    /** open(2); returns the fd or -1. */
    int open(String path, int flags);

    /** close(2). */
    int close(int fd);

    /** ioctl(2) with a by-value argument or the address of a struct ({@code _IO} VFIO ioctls take either). */
    int ioctl(int fd, long request, long arg);

    /** mmap(2) with no address hint; returns the address or -1 (MAP_FAILED). */
    long mmap(long length, int prot, int flags, int fd, long offset);

    /** munmap(2). */
    int munmap(long address, long length);

    /** pread(2) into {@code count} bytes at {@code buffer}; returns bytes read or -1. */
    long pread(int fd, long buffer, long count, long offset);

    /** pwrite(2) from {@code count} bytes at {@code buffer}; returns bytes written or -1. */
    long pwrite(int fd, long buffer, long count, long offset);

    /** read(2). */
    long read(int fd, long buffer, long count);

    /** write(2). */
    long write(int fd, long buffer, long count);

    /** eventfd(2); returns the fd or -1. */
    int eventfd(int initialValue, int flags);

    /**
     * poll(2) over {@code nfds} {@code struct pollfd} (8 bytes each: fd, events, revents) at {@code fds};
     * returns the number of ready fds, 0 on timeout, -1 on failure.
     */
    int poll(long fds, int nfds, int timeoutMillis);

    /** errno of the last failed call on this thread. */
    int errno();

    /** The real kernel, through libc. */
    static Syscalls linux() {
        return NativeSyscalls.INSTANCE;
    }
}
