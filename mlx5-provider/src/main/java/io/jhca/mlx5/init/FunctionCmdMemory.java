package io.jhca.mlx5.init;

import java.util.ArrayList;
import java.util.List;

import io.jhca.memory.DmaRegion;
import io.jhca.mlx5.cmd.CmdMemory;
import io.jhca.mlx5.cmd.DmaBlock;
import io.jhca.mlx5.spi.Mlx5Function;

/**
 * Command queue memory (the queue page and the mailboxes) carved from DMA regions of the function
 * ({@link Mlx5Function#allocateDma}). The command queue allocates its blocks once and keeps them, so a bump allocator
 * over 64 KiB chunks is enough; blocks of up to 4 KiB never cross a 4 KiB page, so each is contiguous in IOVA space
 * even when the translator maps page by page. Everything is released with the queue, by {@link #close()}.
 */
public final class FunctionCmdMemory implements CmdMemory, AutoCloseable {

    private static final int CHUNK = 64 * 1024;
    private static final int PAGE = 4096;

    private final Mlx5Function function;
    private final List<DmaRegion> chunks = new ArrayList<>();
    private DmaRegion current;
    private long next;

    public FunctionCmdMemory(Mlx5Function function) {
        this.function = function;
    }

    @Override
    public synchronized DmaBlock allocate(int length, int alignment) {
        if (length <= 0 || alignment <= 0 || Integer.bitCount(alignment) != 1 || alignment > PAGE) {
            throw new IllegalArgumentException("bad command memory allocation: " + length + " bytes aligned to " + alignment);
        }
        if (length > PAGE) {
            return carve(newChunk(roundUp(length, PAGE)), 0, length);
        }
        if (current != null) {
            long offset = roundUp(next, alignment);
            if ((offset & ~(PAGE - 1L)) != ((offset + length - 1) & ~(PAGE - 1L))) {
                offset = roundUp(offset, PAGE);   // do not cross a page: it may not be contiguous in IOVA space
            }
            if (offset + length <= current.length()) {
                next = offset + length;
                return carve(current, offset, length);
            }
        }
        current = newChunk(CHUNK);
        next = length;
        return carve(current, 0, length);
    }

    private DmaRegion newChunk(long bytes) {
        DmaRegion r = function.allocateDma(bytes);
        chunks.add(r);
        if ((r.iova(0) & (PAGE - 1)) != 0) {
            throw new IllegalStateException(String.format("DMA region IOVA 0x%x is not 4 KiB aligned", r.iova(0)));
        }
        return r;
    }

    private static DmaBlock carve(DmaRegion r, long offset, int length) {
        long iova = r.iova(offset);
        if (r.iova(offset + length - 1) != iova + length - 1) {
            throw new IllegalStateException("command memory block of " + length + " bytes is not contiguous in IOVA space");
        }
        DmaBlock b = new DmaBlock(r.buffer(offset, length), iova);
        b.buffer().setMemory(0, length, (byte) 0);
        return b;
    }

    private static long roundUp(long v, long a) {
        return (v + a - 1) & -a;
    }

    @Override
    public void free(DmaBlock block) {
        // bump allocator: the chunks go back to the function with close()
    }

    @Override
    public synchronized void close() {
        for (DmaRegion r : chunks) {
            r.close();
        }
        chunks.clear();
        current = null;
    }
}
