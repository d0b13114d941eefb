package io.jhca.mlx5.cmd;

/**
 * Where the command queue gets its DMA memory: the queue page and the mailboxes. The driver's is
 * {@code io.jhca.mlx5.init.FunctionCmdMemory} (carved from the function's DMA memory); the ConnectX model's tests
 * use direct buffers with made-up IOVAs ({@code io.jhca.connectx.DirectCmdMemory}).
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
