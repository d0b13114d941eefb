package io.jhca.verbs;

import io.jhca.memory.DmaRegion;

/**
 * A memory registration ({@code struct ibv_mr}): a span of a {@link DmaRegion} with access rights and the
 * keys that name it, lkey for local work requests and rkey for remote peers. While registered the region
 * cannot be unmapped (it is retained), so no device and no engine can ever touch freed memory.
 */
public abstract class MemoryRegion extends VerbsResource {
    private final ProtectionDomain pd;
    private final DmaRegion region;
    private final long offset;
    private final long length;
    private final int access;
    private final int lkey;
    private final int rkey;

    protected MemoryRegion(ProtectionDomain pd, DmaRegion region, long offset, long length, int access, int lkey, int rkey) {
        super("MR", pd);
        region.retain();
        this.pd = pd;
        this.region = region;
        this.offset = offset;
        this.length = length;
        this.access = access;
        this.lkey = lkey;
        this.rkey = rkey;
    }

    public final ProtectionDomain pd() {
        return pd;
    }

    public final DmaRegion region() {
        return region;
    }

    /** Offset of the registered span inside {@link #region()}. */
    public final long offset() {
        return offset;
    }

    /** Virtual address of the first registered byte: what a peer puts in RETH.VA, what SGEs point into. */
    public final long address() {
        return region.address() + offset;
    }

    public final long length() {
        return length;
    }

    /** {@link Access} bits. */
    public final int access() {
        return access;
    }

    public final int lkey() {
        return lkey;
    }

    public final int rkey() {
        return rkey;
    }

    /** True if {@code [addr, addr + len)} lies inside this registration (overflow-safe). */
    public final boolean contains(long addr, long len) {
        long start = address();
        return len >= 0 && addr >= start && addr - start <= length - len;
    }

    @Override
    public String describe() {
        return "MR lkey=0x" + Integer.toHexString(lkey);
    }

    @Override
    protected final void destroy() {
        deregister();
        region.release();
    }

    /** Provider side: forget the keys. */
    protected abstract void deregister();
}
