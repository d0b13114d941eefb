package io.jhca.verbs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;

/** A region the fake device only records: no memory is touched, so it may sit anywhere. */
final class UnbackedRegion implements DmaRegion {
    private final long address;
    private final long length;
    private int refs;
    private boolean closed;

    UnbackedRegion(long address, long length) {
        this.address = address;
        this.length = length;
    }

    @Override
    public long address() {
        return address;
    }

    @Override
    public long length() {
        return length;
    }

    @Override
    public long pageSize() {
        return 4096;
    }

    @Override
    public long iova(long offset) {
        return address + offset;
    }

    @Override
    public UnsafeBuffer buffer() {
        throw new UnsupportedOperationException("no memory behind this region");
    }

    @Override
    public UnsafeBuffer buffer(long offset, int length) {
        throw new UnsupportedOperationException("no memory behind this region");
    }

    @Override
    public DmaRegion slice(long offset, long length) {
        throw new UnsupportedOperationException("no slices");
    }

    @Override
    public boolean isClosed() {
        return closed;
    }

    @Override
    public void retain() {
        refs++;
    }

    @Override
    public void release() {
        refs--;
    }

    @Override
    public void close() {
        assertEquals(0, refs, "closed while registered");
        closed = true;
    }
}
