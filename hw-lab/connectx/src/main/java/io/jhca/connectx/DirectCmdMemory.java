package io.jhca.connectx;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.concurrent.ConcurrentSkipListMap;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cmd.CmdMemory;
import io.jhca.mlx5.cmd.DmaBlock;

/**
 * Command memory from direct {@link ByteBuffer}s, for device models and tests: both the driver side
 * ({@link CmdMemory}) and the device side ({@link DeviceDma}) of one simulated DMA space.
 *
 * <p>IOVAs are either the buffers' virtual addresses ({@link #identity()}) or handed out from a base like an IOMMU
 * allocator would ({@link #withIovaBase(long)}); the latter makes traces reproducible and catches a driver that
 * passes virtual addresses where IOVAs belong. The device side only resolves ranges inside live allocations.
 */
public final class DirectCmdMemory implements CmdMemory, DeviceDma {

    private record Range(long iova, int length, long address, ByteBuffer keepAlive) {
    }

    private final boolean identity;
    private final ConcurrentSkipListMap<Long, Range> ranges = new ConcurrentSkipListMap<>();
    private long nextIova;

    private DirectCmdMemory(boolean identity, long iovaBase) {
        this.identity = identity;
        this.nextIova = iovaBase;
    }

    /** IOVA = virtual address. */
    public static DirectCmdMemory identity() {
        return new DirectCmdMemory(true, 0);
    }

    /** IOVAs allocated upwards from {@code iovaBase}, independent of where the memory really is. */
    public static DirectCmdMemory withIovaBase(long iovaBase) {
        if (iovaBase <= 0) {
            throw new IllegalArgumentException("IOVA base must be positive (0 means 'no mailbox')");
        }
        return new DirectCmdMemory(false, iovaBase);
    }

    @Override
    public synchronized DmaBlock allocate(int length, int alignment) {
        if (length <= 0 || alignment <= 0 || Integer.bitCount(alignment) != 1) {
            throw new IllegalArgumentException("bad allocation: " + length + " bytes aligned to " + alignment);
        }
        ByteBuffer bb = ByteBuffer.allocateDirect(length + alignment);
        long raw = new UnsafeBuffer(bb).addressOffset();
        int pad = (int) (-raw & (alignment - 1));
        UnsafeBuffer buffer = new UnsafeBuffer(bb, pad, length);
        long address = buffer.addressOffset();
        long iova;
        if (identity) {
            iova = address;
        } else {
            iova = (nextIova + alignment - 1) & -(long) alignment;
            nextIova = iova + length;
        }
        ranges.put(iova, new Range(iova, length, address, bb));
        return new DmaBlock(buffer, iova);
    }

    @Override
    public void free(DmaBlock block) {
        ranges.remove(block.iova());
    }

    @Override
    public boolean wrap(UnsafeBuffer view, long iova, int length) {
        if (length < 0) {
            return false;
        }
        Map.Entry<Long, Range> e = ranges.floorEntry(iova);
        if (e == null) {
            return false;
        }
        Range r = e.getValue();
        long offset = iova - r.iova;
        if (offset + length > r.length) {
            return false;
        }
        view.wrap(r.address + offset, length);
        return true;
    }

    /** Number of live allocations. */
    public int allocations() {
        return ranges.size();
    }
}
