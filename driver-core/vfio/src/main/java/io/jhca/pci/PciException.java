package io.jhca.pci;

/** A PCI discovery or binding step was refused or failed; the message says what is wrong and what to do. */
public class PciException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    public PciException(final String message) {
        super(message);
    }

    public PciException(final String message, final Throwable cause) {
        super(message, cause);
    }
}
