package io.jhca.verbs;

/**
 * A verb was refused: bad arguments, an illegal state transition, a resource still in use, a device error.
 * Carries the errno that libibverbs would return in the same situation, so callers can compare behaviour.
 */
public class VerbsException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public static final int EPERM = 1;
    public static final int ENOENT = 2;
    public static final int EIO = 5;
    public static final int EAGAIN = 11;
    public static final int ENOMEM = 12;
    public static final int EACCES = 13;
    public static final int EFAULT = 14;
    public static final int EBUSY = 16;
    public static final int EINVAL = 22;
    public static final int ENOSPC = 28;
    public static final int ENOSYS = 38;
    public static final int EOVERFLOW = 75;
    public static final int EOPNOTSUPP = 95;
    public static final int ETIMEDOUT = 110;

    private final int errno;

    public VerbsException(int errno, String message) {
        super(message);
        this.errno = errno;
    }

    public VerbsException(int errno, String message, Throwable cause) {
        super(message, cause);
        this.errno = errno;
    }

    /** The errno libibverbs would report. */
    public int errno() {
        return errno;
    }
}
