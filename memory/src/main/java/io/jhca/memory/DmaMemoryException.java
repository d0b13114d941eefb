package io.jhca.memory;

/** A DMA memory operation failed (mmap, mlock, madvise, IOVA translation); the message says why and what to do. */
public class DmaMemoryException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public DmaMemoryException(final String message) {
        super(message);
    }

    public DmaMemoryException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
