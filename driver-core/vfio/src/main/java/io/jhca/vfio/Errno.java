package io.jhca.vfio;

/**
 * Names and texts of the errno values the VFIO and sysfs calls report, so that messages read
 * {@code "EBUSY (Device or resource busy)"} on every libc. Numbers are Linux's (asm-generic/errno-base.h,
 * asm-generic/errno.h; x86-64 and arm64 agree), texts are glibc's strerror.
 */
public final class Errno {

    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EINTR = 4;
    public static final int EIO = 5;
    public static final int ENXIO = 6;
    public static final int E2BIG = 7;
    public static final int EBADF = 9;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EEXIST = 17;
    public static final int ENODEV = 19;
    public static final int EINVAL = 22;
    public static final int EMFILE = 24;
    public static final int ENOTTY = 25;
    public static final int ENOSPC = 28;
    public static final int ERANGE = 34;
    public static final int ENOSYS = 38;
    public static final int EOPNOTSUPP = 95;

    private static final String[][] TABLE = {
        {"EPERM", "Operation not permitted"}, {"ENOENT", "No such file or directory"}, {"ESRCH", "No such process"},
        {"EINTR", "Interrupted system call"}, {"EIO", "Input/output error"}, {"ENXIO", "No such device or address"},
        {"E2BIG", "Argument list too long"}, {"ENOEXEC", "Exec format error"}, {"EBADF", "Bad file descriptor"},
        {"ECHILD", "No child processes"}, {"EAGAIN", "Resource temporarily unavailable"},
        {"ENOMEM", "Cannot allocate memory"}, {"EACCES", "Permission denied"}, {"EFAULT", "Bad address"},
        {"ENOTBLK", "Block device required"}, {"EBUSY", "Device or resource busy"}, {"EEXIST", "File exists"},
        {"EXDEV", "Invalid cross-device link"}, {"ENODEV", "No such device"}, {"ENOTDIR", "Not a directory"},
        {"EISDIR", "Is a directory"}, {"EINVAL", "Invalid argument"}, {"ENFILE", "Too many open files in system"},
        {"EMFILE", "Too many open files"}, {"ENOTTY", "Inappropriate ioctl for device"},
        {"ETXTBSY", "Text file busy"}, {"EFBIG", "File too large"}, {"ENOSPC", "No space left on device"},
        {"ESPIPE", "Illegal seek"}, {"EROFS", "Read-only file system"}, {"EMLINK", "Too many links"},
        {"EPIPE", "Broken pipe"}, {"EDOM", "Numerical argument out of domain"},
        {"ERANGE", "Numerical result out of range"}, {"EDEADLK", "Resource deadlock avoided"},
        {"ENAMETOOLONG", "File name too long"}, {"ENOLCK", "No locks available"},
        {"ENOSYS", "Function not implemented"},
    };

    private Errno() {
    }

    /** "EBUSY", or "errno N" for a number this table does not know. */
    public static String name(final int errno) {
        if (errno >= 1 && errno <= TABLE.length) {
            return TABLE[errno - 1][0];
        }
        return errno == EOPNOTSUPP ? "EOPNOTSUPP" : "errno " + errno;
    }

    /** glibc's strerror text, or "Unknown error N". */
    public static String text(final int errno) {
        if (errno >= 1 && errno <= TABLE.length) {
            return TABLE[errno - 1][1];
        }
        return errno == EOPNOTSUPP ? "Operation not supported" : "Unknown error " + errno;
    }

    /** "EBUSY (Device or resource busy)". */
    public static String describe(final int errno) {
        return name(errno) + " (" + text(errno) + ")";
    }
}
