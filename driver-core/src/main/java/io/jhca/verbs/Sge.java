package io.jhca.verbs;

/** A scatter/gather element ({@code struct ibv_sge}): a span of registered memory named by its lkey. Reusable. */
public final class Sge {
    private long addr;
    private int length;
    private int lkey;

    public Sge set(long addr, int length, int lkey) {
        this.addr = addr;
        this.length = length;
        this.lkey = lkey;
        return this;
    }

    /** The span {@code [offset, offset + length)} of a memory region. */
    public Sge set(MemoryRegion mr, long offset, int length) {
        return set(mr.address() + offset, length, mr.lkey());
    }

    public long addr() {
        return addr;
    }

    public int length() {
        return length;
    }

    public int lkey() {
        return lkey;
    }

    @Override
    public String toString() {
        return "sge{addr=0x" + Long.toHexString(addr) + ", length=" + length + ", lkey=0x" + Integer.toHexString(lkey) + "}";
    }
}
