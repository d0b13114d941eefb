package io.jhca.lab;

import jnr.ffi.LibraryLoader;
import jnr.ffi.annotations.In;
import jnr.ffi.byref.IntByReference;

/**
 * The C library calls the tools make that the JDK does not offer, bound once through jnr-ffi (binding costs a class
 * generation, so it is done on first use and shared): setsockopt for the exchange's TCP_USER_TIMEOUT
 * ({@link TcpUserTimeout}), getppid as the null system call that {@link MachineReport} times.
 */
final class Libc {

    /** The binding; public only because jnr-ffi generates its implementation in another class loader. */
    public interface Calls {
        int setsockopt(int fd, int level, int optname, @In IntByReference optval, int optlen);

        int getppid();
    }

    private static volatile Calls calls;

    private Libc() {
    }

    /** The bound calls; throws (a RuntimeException or LinkageError) where libc cannot be bound. */
    static Calls get() {
        Calls c = calls;
        if (c == null) {
            c = LibraryLoader.create(Calls.class).load("c");
            calls = c;
        }
        return c;
    }
}
