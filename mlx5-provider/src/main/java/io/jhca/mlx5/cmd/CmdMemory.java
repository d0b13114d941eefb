package io.jhca.mlx5.cmd;

/**
 * Where the command queue gets its DMA memory: the queue page and the mailboxes. Implementations:
 * {@link RegionCmdMemory}
 * (carved from a pinned, IOMMU-mapped {@code io.jhca.memory.DmaRegion}) and {@link DirectCmdMemory} (direct
 * buffers with made-up IOVAs, for device models and tests).
 */
public interface CmdMemory {

    /**
     * A zeroed block of {@code length} bytes whose IOVA is a multiple of {@code alignment} (a power of two).
     *
     * @throws IllegalStateException when the memory is exhausted
     */
    DmaBlock allocate(int length, int alignment);

    /** Returns a block; the device must no longer use it. */
    void free(DmaBlock block);
}
