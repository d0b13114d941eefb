package io.jhca.connectx;

import jnr.ffi.LibraryLoader;

/**
 * membarrier(2), private expedited: a full memory barrier on every CPU running a thread of this process, issued by
 * the one thread that calls it. It is the heavy half of an asymmetric Dekker handshake: the firmware thread about to
 * sleep pays a system call (rarely: only after its idle time), so that the driver's doorbell path, run for every
 * doorbell, needs no fence of its own before it reads whether the firmware sleeps (it needs only the compiler not to
 * move that read above its store).
 *
 * <p>Constants from linux/membarrier.h ({@code MEMBARRIER_CMD_PRIVATE_EXPEDITED = 1 << 3}, {@code
 * MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED = 1 << 4}, Linux 4.14); system call numbers from the kernel's tables
 * (x86-64 324, arm64 283).
 */
final class Membarrier {

    private static final int CMD_PRIVATE_EXPEDITED = 1 << 3;
    private static final int CMD_REGISTER_PRIVATE_EXPEDITED = 1 << 4;

    /** jnr-ffi binding; public only because jnr-ffi generates the implementation in its own class loader. */
    public interface Sys {
        long syscall(long number, int cmd, int flags, int cpuId);
    }

    private static final Sys SYS = load();
    private static final long NR = syscallNumber();
    /** Whether this process registered for private expedited barriers: false where the kernel or arch has none. */
    static final boolean AVAILABLE = register();

    private Membarrier() {
    }

    private static Sys load() {
        try {
            return LibraryLoader.create(Sys.class).load("c");
        } catch (RuntimeException | LinkageError e) {
            return null;
        }
    }

    private static long syscallNumber() {
        switch (System.getProperty("os.arch", "")) {
            case "amd64":
            case "x86_64":
                return 324;
            case "aarch64":
                return 283;
            default:
                return -1;
        }
    }

    private static boolean register() {
        if (SYS == null || NR < 0 || !System.getProperty("os.name", "").startsWith("Linux")) {
            return false;
        }
        try {
            return SYS.syscall(NR, CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0
                && SYS.syscall(NR, CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
        } catch (RuntimeException | LinkageError e) {
            return false;
        }
    }

    /** A full barrier on every CPU that runs a thread of this process; false if the kernel refused it. */
    static boolean everyThread() {
        return AVAILABLE && SYS.syscall(NR, CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
    }
}
