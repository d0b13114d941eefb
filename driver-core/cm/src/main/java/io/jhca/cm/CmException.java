package io.jhca.cm;

/** A connection management call that cannot be done, naming why. */
public final class CmException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public CmException(String message) {
        super(message);
    }

    public CmException(String message, Throwable cause) {
        super(message, cause);
    }
}
