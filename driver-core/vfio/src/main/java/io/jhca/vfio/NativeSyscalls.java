package io.jhca.vfio;

import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;
import jnr.ffi.types.ssize_t;

/** {@link Syscalls} on libc, bound with jnr-ffi (no JNI of our own). */
final class NativeSyscalls implements Syscalls {

    static final NativeSyscalls INSTANCE = new NativeSyscalls();

    /** The libc functions; public only because jnr-ffi implements it in its own class loader. */
    public interface LibC {
        @SaveError
        int open(String path, int flags);

        @SaveError
        int close(int fd);

        // ioctl is variadic; on the System V ABIs the third argument travels in a register either way.
        @SaveError
        int ioctl(int fd, long request, long arg);

        // A Pointer, not a long, for the address: jnr-ffi passed the long-typed form's offset wrongly (glibc then
        // refused it with EINVAL before any system call), while the Pointer form is what the memory module uses.
        @SaveError
        Pointer mmap(Pointer addr, @size_t long length, int prot, int flags, int fd, @off_t long offset);

        @SaveError
        int munmap(Pointer addr, @size_t long length);

        @SaveError
        @ssize_t long pread(int fd, long buf, @size_t long count, @off_t long offset);

        @SaveError
        @ssize_t long pwrite(int fd, long buf, @size_t long count, @off_t long offset);

        @SaveError
        @ssize_t long read(int fd, long buf, @size_t long count);

        @SaveError
        @ssize_t long write(int fd, long buf, @size_t long count);

        @SaveError
        int eventfd(int initval, int flags);

        @SaveError
        int poll(long fds, long nfds, int timeout);
    }

    private final LibC libc = LibraryLoader.create(LibC.class).load("c");
    private final Runtime runtime = Runtime.getRuntime(libc);

    private NativeSyscalls() {
    }

    @Override
    public int open(final String path, final int flags) {
        return libc.open(path, flags);
    }

    @Override
    public int close(final int fd) {
        return libc.close(fd);
    }

    @Override
    public int ioctl(final int fd, final long request, final long arg) {
        return libc.ioctl(fd, request, arg);
    }

    @Override
    public long mmap(final long length, final int prot, final int flags, final int fd, final long offset) {
        final Pointer p = libc.mmap(null, length, prot, flags, fd, offset);
        return p == null ? 0 : p.address(); // MAP_FAILED comes back as address -1
    }

    @Override
    public int munmap(final long address, final long length) {
        return libc.munmap(Pointer.wrap(runtime, address), length);
    }

    @Override
    public long pread(final int fd, final long buffer, final long count, final long offset) {
        return libc.pread(fd, buffer, count, offset);
    }

    @Override
    public long pwrite(final int fd, final long buffer, final long count, final long offset) {
        return libc.pwrite(fd, buffer, count, offset);
    }

    @Override
    public long read(final int fd, final long buffer, final long count) {
        return libc.read(fd, buffer, count);
    }

    @Override
    public long write(final int fd, final long buffer, final long count) {
        return libc.write(fd, buffer, count);
    }

    @Override
    public int eventfd(final int initialValue, final int flags) {
        return libc.eventfd(initialValue, flags);
    }

    @Override
    public int poll(final long fds, final int nfds, final int timeoutMillis) {
        return libc.poll(fds, nfds, timeoutMillis);
    }

    @Override
    public int errno() {
        return LastError.getLastError(runtime);
    }
}
