package io.jhca.connectx;

import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;

/**
 * The libc calls of the ivshmem server ({@link IvshmemServer}): a unix stream socket, sendmsg with SCM_RIGHTS,
 * eventfds. Bound with jnr-ffi; errno saved by every call that can fail, read with {@link #errno()} on the same
 * thread right after it.
 *
 * <p>Public only because jnr-ffi generates the implementation in its own class loader.
 */
public interface SocketLibC {

    SocketLibC INSTANCE = LibraryLoader.create(SocketLibC.class).load("c");

    // sys/socket.h, sys/un.h, sys/eventfd.h, poll.h, fcntl.h (x86-64 Linux)
    int AF_UNIX = 1;
    int SOCK_STREAM = 1;
    int SOCK_CLOEXEC = 0x80000;
    int SOL_SOCKET = 1;
    int SCM_RIGHTS = 1;
    int MSG_NOSIGNAL = 0x4000;
    int EFD_CLOEXEC = 0x80000;
    int EFD_NONBLOCK = 0x800;
    short POLLIN = 0x1;
    int O_RDWR = 02;
    int O_CLOEXEC = 02000000;
    int EINTR = 4;
    int EAGAIN = 11;
    /** sizeof(struct sockaddr_un.sun_path). */
    int SUN_PATH_BYTES = 108;

    @SaveError
    int socket(int domain, int type, int protocol);

    @SaveError
    int bind(int fd, Pointer addr, int addrlen);

    @SaveError
    int listen(int fd, int backlog);

    @SaveError
    int accept4(int fd, Pointer addr, Pointer addrlen, int flags);

    @SaveError
    @ssize_t
    long sendmsg(int fd, Pointer msg, int flags);

    @SaveError
    int connect(int fd, Pointer addr, int addrlen);

    @SaveError
    @ssize_t
    long recvmsg(int fd, Pointer msg, int flags);

    @SaveError
    @ssize_t
    long read(int fd, Pointer buf, @size_t long count);

    @SaveError
    @ssize_t
    long pread(int fd, Pointer buf, @size_t long count, long offset);

    @SaveError
    int poll(Pointer fds, long nfds, int timeoutMillis);

    @SaveError
    int eventfd(int initval, int flags);

    @SaveError
    @ssize_t
    long write(int fd, Pointer buf, @size_t long count);

    @SaveError
    int open(String path, int flags, int mode);

    @SaveError
    int close(int fd);

    @SaveError
    int unlink(String path);

    String strerror(int errnum);

    static Runtime runtime() {
        return Runtime.getRuntime(INSTANCE);
    }

    static int errno() {
        return LastError.getLastError(runtime());
    }

    static String describe(int errno) {
        return "errno " + errno + " (" + INSTANCE.strerror(errno) + ")";
    }
}
