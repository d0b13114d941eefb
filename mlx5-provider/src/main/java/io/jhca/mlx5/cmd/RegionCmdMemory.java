package io.jhca.mlx5.cmd;

import io.jhca.memory.DmaRegion;

/**
 * Command memory carved from one pinned, device-mapped {@link DmaRegion} with a bump allocator. The command queue
 * allocates a handful of blocks once (queue page, mailboxes grown on demand) and keeps them, so freed blocks are
 * simply not reused; size the region for the worst case (4 KiB page + 1 KiB per mailbox).
 */
public final class RegionCmdMemory implements CmdMemory {

    private final DmaRegion region;
    private long next;

    public RegionCmdMemory(DmaRegion region) {
        this.region = region;
    }

    @Override
    public synchronized DmaBlock allocate(int length, int alignment) {
        if (length <= 0 || alignment <= 0 || Integer.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("bad allocation: " + length + " bytes aligned to " + alignment);
        }
        // align the device address: that is what the device checks
        long offset = next;
        while (((region.iova(offset)) & (alignment - 1)) != 0) {
            long iova = region.iova(offset);
            offset += ((iova + alignment - 1) & -(long) alignment) - iova;
        }
        if (offset + length > region.length()) {
            throw new IllegalStateException("command memory exhausted: " + region.length() + " bytes, need "
                    + (offset + length));
        }
        if (region.iova(offset + length - 1) != region.iova(offset) + length - 1) {
            throw new IllegalStateException("block at region offset " + offset + " is not contiguous in IOVA space");
        }
        next = offset + length;
        DmaBlock block = new DmaBlock(region.buffer(offset, length), region.iova(offset));
        block.buffer().setMemory(0, length, (byte) 0);
        return block;
    }

    @Override
    public void free(DmaBlock block) {
        // bump allocator: the region is released as a whole by its owner
    }
}
