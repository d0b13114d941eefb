package io.jhca.memory;

import jnr.ffi.LastError;
import jnr.ffi.LibraryLoader;
import jnr.ffi.Pointer;
import jnr.ffi.Runtime;
import jnr.ffi.annotations.SaveError;
import jnr.ffi.types.mode_t;
import jnr.ffi.types.off_t;
import jnr.ffi.types.size_t;

/**
 * The few libc calls this module needs, bound with jnr-ffi (no JNI code of our own).
 * Every call that can fail saves errno; read it with {@link #errno()} right after the call, on the same thread.
 *
 * <p>Public only because jnr-ffi generates the implementation in its own class loader; it is this module's
 * plumbing, not part of its API.
 */
public interface LibC {

    /** The loaded C library. */
    LibC INSTANCE = LibraryLoader.create(LibC.class).load("c");

    /** Returns the mapping's address, or {@link LinuxConstants#MAP_FAILED}. */
    @SaveError
    Pointer mmap(Pointer addr, @size_t long length, int prot, int flags, int fd, @off_t long offset);

    @SaveError
    int munmap(Pointer addr, @size_t long length);

    @SaveError
    int mlock(Pointer addr, @size_t long length);

    @SaveError
    int munlock(Pointer addr, @size_t long length);

    @SaveError
    int madvise(Pointer addr, @size_t long length, int advice);

    @SaveError
    int open(String path, int flags, @mode_t int mode);

    @SaveError
    int close(int fd);

    @SaveError
    int ftruncate(int fd, @off_t long length);

    int getpagesize();

    String strerror(int errnum);

    /** The jnr runtime the binding lives in (for {@link Pointer#wrap(Runtime, long)}). */
    static Runtime runtime() {
        return Runtime.getRuntime(INSTANCE);
    }

    /** errno saved by the last {@link SaveError} call on this thread. */
    static int errno() {
        return LastError.getLastError(runtime());
    }

    /** A raw address as a jnr pointer. */
    static Pointer pointer(final long address) {
        return Pointer.wrap(runtime(), address);
    }

    /** "ENOMEM (Cannot allocate memory)". */
    static String describe(final int errno) {
        return LinuxConstants.errnoName(errno) + " (" + INSTANCE.strerror(errno) + ")";
    }
}
