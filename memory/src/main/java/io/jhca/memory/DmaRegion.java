package io.jhca.memory;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A span of pinned, off-heap memory that a device may read and write by DMA.
 *
 * <p>A region is valid from allocation until {@link #close()}. While a memory registration (or any other
 * device-side user) holds it through {@link #retain()}, close is refused: a device must never DMA into
 * unmapped memory, and Java code must never touch it (that would crash the JVM, not throw).
 * After close every accessor throws {@link IllegalStateException}; closing twice is harmless.
 */
public interface DmaRegion extends AutoCloseable {

    /** Virtual address of the first byte. */
    long address();

    /** Length in bytes. */
    long length();

    /** Page size backing the region (4 KiB, or 2 MiB for huge pages). */
    long pageSize();

    /** The device address (IOVA) of the byte at {@code offset}, through this region's {@link IovaTranslator}. */
    long iova(long offset);

    /** A buffer view over the whole region (regions of at most 2 GiB - 1 bytes; larger ones use {@link #buffer(long, int)}). */
    UnsafeBuffer buffer();

    /** A buffer view over {@code [offset, offset + length)}, bounds checked now. */
    UnsafeBuffer buffer(long offset, int length);

    /** A sub-region sharing this region's memory and lifetime, bounds checked now. */
    DmaRegion slice(long offset, long length);

    /** True once {@link #close()} has run. */
    boolean isClosed();

    /** Take a reference that blocks {@link #close()} (used by memory registrations). */
    void retain();

    /** Drop a reference taken with {@link #retain()}. */
    void release();

    /** Unmaps the memory (for a slice: nothing but marking the slice closed). Refused while retained. */
    @Override
    void close();
}
