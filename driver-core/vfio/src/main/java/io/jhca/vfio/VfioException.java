package io.jhca.vfio;

/**
 * A VFIO or kernel call failed: names the device (a PCI address, a group or the container), the call and the
 * errno, e.g. {@code "0000:00:03.0: VFIO_GROUP_SET_CONTAINER failed: EBUSY (Device or resource busy)"}.
 * Checks this library makes itself (a closed object, a region that cannot be mapped) use errno 0.
 */
public class VfioException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final String device;
    private final String call;
    private final int errno;

    /** A failed kernel call; {@code hint} (may be null) says what to do about it. */
    public VfioException(final String device, final String call, final int errno, final String hint) {
        super(device + ": " + call + " failed: " + Errno.describe(errno) + (hint == null || hint.isEmpty() ? "" : ": " + hint));
        this.device = device;
        this.call = call;
        this.errno = errno;
    }

    /** A refusal by this library (no errno): {@code "0000:00:03.0: VFIO_DEVICE_RESET: the device does not support reset"}. */
    public static VfioException refused(final String device, final String call, final String why) {
        return new VfioException(device, call, why);
    }

    private VfioException(final String device, final String call, final String why) {
        super(device + ": " + call + ": " + why);
        this.device = device;
        this.call = call;
        this.errno = 0;
    }

    /** The device, group ("group 12") or "container" the call was made on. */
    public String device() {
        return device;
    }

    /** The ioctl or system call, e.g. "VFIO_IOMMU_MAP_DMA" or "open /dev/vfio/12". */
    public String call() {
        return call;
    }

    /** The errno the kernel returned, 0 for a refusal by this library. */
    public int errno() {
        return errno;
    }
}
