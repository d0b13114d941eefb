package io.jhca.connectx;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;

/**
 * DMA memory handed out by {@link ModelFunction#allocateDma}: an ordinary pinned region that the model's IOMMU maps for
 * as long as it is open. Closing it unmaps it from the device first (stopping whatever the device cached in it, as
 * the vfio backend's VFIO_IOMMU_UNMAP_DMA would), then releases the memory.
 */
final class ModelDmaRegion implements DmaRegion {

    private final DmaRegion inner;
    private final ModelFunction function;

    ModelDmaRegion(DmaRegion inner, ModelFunction function) {
        this.inner = inner;
        this.function = function;
    }

    DmaRegion inner() {
        return inner;
    }

    @Override
    public long address() {
        return inner.address();
    }

    @Override
    public long length() {
        return inner.length();
    }

    @Override
    public long pageSize() {
        return inner.pageSize();
    }

    @Override
    public long iova(long offset) {
        return inner.iova(offset);
    }

    @Override
    public UnsafeBuffer buffer() {
        return inner.buffer();
    }

    @Override
    public UnsafeBuffer buffer(long offset, int length) {
        return inner.buffer(offset, length);
    }

    @Override
    public DmaRegion slice(long offset, long length) {
        return inner.slice(offset, length);
    }

    @Override
    public boolean isClosed() {
        return inner.isClosed();
    }

    @Override
    public void retain() {
        inner.retain();
    }

    @Override
    public void release() {
        inner.release();
    }

    @Override
    public void close() {
        if (!inner.isClosed()) {
            function.release(this);
        }
    }

    @Override
    public String toString() {
        return "sim DMA " + inner;
    }
}
