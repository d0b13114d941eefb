package io.jhca.connectx;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * The device's side of DMA, for device models: resolves an IOVA range the driver handed over to memory the model can
 * read and write. A range that is not mapped is a DMA fault, reported as {@code false} rather than touching memory.
 */
public interface DeviceDma {

    /**
     * Points {@code view} at {@code [iova, iova + length)}.
     *
     * @return false if any part of the range is not mapped (view left untouched)
     */
    boolean wrap(UnsafeBuffer view, long iova, int length);
}
