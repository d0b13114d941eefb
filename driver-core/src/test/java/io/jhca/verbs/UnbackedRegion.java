package io.jhca.verbs;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;
import io.jhca.memory.RefCountedDmaRegion;

/**
 * A region the fake device only records: no memory is touched, so it may sit anywhere. Its lifetime is
 * {@link RefCountedDmaRegion}'s: it refuses to close while a registration holds it.
 */
final class UnbackedRegion extends RefCountedDmaRegion {
    private final long address;
    private final long length;

    UnbackedRegion(long address, long length) {
        this.address = address;
        this.length = length;
    }

    @Override
    protected void onClosed() {
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
}
