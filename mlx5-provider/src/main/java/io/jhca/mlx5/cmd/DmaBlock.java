package io.jhca.mlx5.cmd;

import org.agrona.concurrent.UnsafeBuffer;

/**
 * A block of DMA-able memory: the CPU's view and the address the device uses for it (the IOVA; a physical address
 * without an IOMMU). The buffer covers exactly the block.
 */
public record DmaBlock(UnsafeBuffer buffer, long iova) {

    public int length() {
        return buffer.capacity();
    }
}
