package io.jhca.vfio;

/** A range of IO virtual addresses, both ends inclusive (as {@code struct vfio_iova_range} reports them). */
public record IovaRange(long start, long end) {

    public IovaRange {
        if (Long.compareUnsigned(start, end) > 0) {
            throw new IllegalArgumentException("IOVA range start 0x" + Long.toHexString(start)
                + " above end 0x" + Long.toHexString(end));
        }
    }

    /** Bytes in the range (saturates at Long.MAX_VALUE for the full 64-bit space). */
    public long length() {
        final long n = end - start + 1;
        return n <= 0 ? Long.MAX_VALUE : n;
    }

    @Override
    public String toString() {
        return "[0x" + Long.toHexString(start) + "-0x" + Long.toHexString(end) + "]";
    }
}
