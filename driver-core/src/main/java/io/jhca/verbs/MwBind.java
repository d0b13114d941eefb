package io.jhca.verbs;

/**
 * What a memory window is bound to ({@code struct ibv_mw_bind_info}): a span {@code [addr, addr + length)} of a
 * memory region and the remote access rights the window grants. Reusable: posting copies what it needs. A null
 * MR with address and length 0 unbinds a type 1 window.
 */
public final class MwBind {
    private MemoryRegion mr;
    private long addr;
    private long length;
    private int access;

    public MwBind() {
    }

    /** Binds to {@code [addr, addr + length)} of {@code mr} with the given {@link Access} flags. */
    public MwBind(MemoryRegion mr, long addr, long length, Access... access) {
        set(mr, addr, length, Access.mask(access));
    }

    /** Sets every field; {@code accessMask} is an {@link Access} mask. */
    public MwBind set(MemoryRegion mr, long addr, long length, int accessMask) {
        this.mr = mr;
        this.addr = addr;
        this.length = length;
        this.access = accessMask;
        return this;
    }

    public MemoryRegion mr() {
        return mr;
    }

    public long addr() {
        return addr;
    }

    public long length() {
        return length;
    }

    /** {@link Access} bits the window grants. */
    public int access() {
        return access;
    }

    @Override
    public String toString() {
        return "bind{" + (mr == null ? "no MR" : mr.describe()) + ", addr=0x" + Long.toHexString(addr) + ", length="
                + length + ", access=" + Access.describe(access) + "}";
    }
}
