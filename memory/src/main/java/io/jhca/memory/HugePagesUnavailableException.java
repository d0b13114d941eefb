package io.jhca.memory;

/**
 * Huge pages were asked for and the kernel has none (or not enough) to give. Thrown only when
 * {@link DmaOptions#fallbackToSmallPages(boolean)} was not set; the message says how many are free and how
 * to reserve more.
 */
public class HugePagesUnavailableException extends DmaMemoryException {

    private static final long serialVersionUID = 1L;

    public HugePagesUnavailableException(final String message) {
        super(message);
    }
}
