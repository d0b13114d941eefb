package io.jhca.verbs;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import io.jhca.memory.DmaRegion;

/**
 * A memory registration ({@code struct ibv_mr}): a span of a {@link DmaRegion} with access rights and the
 * keys that name it, lkey for local work requests and rkey for remote peers. While registered the region
 * cannot be unmapped (it is retained), so no device and no engine can ever touch freed memory.
 *
 * <p>Software that copies the registered bytes itself (inline data at post time, a software device's engine)
 * looks the MR up by key and {@linkplain #hold() holds} it for exactly as long as it copies: deregistration
 * (from any thread) waits for the holds to end and then refuses new ones, so the region cannot be released and
 * unmapped under a copy. Between a key lookup and its hold the MR may be deregistered; the hold then fails and
 * the copy must not happen.
 */
public abstract class MemoryRegion extends VerbsResource {
    private static final VarHandle HOLDS;
    /** Bit 31 of {@link #holds}: deregistration began, no new hold. */
    private static final int RETIRED = 1 << 31;

    static {
        try {
            HOLDS = MethodHandles.lookup().findVarHandle(MemoryRegion.class, "holds", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final ProtectionDomain pd;
    private final DmaRegion region;
    private final long offset;
    /**
     * The first registered byte's address, fixed while registered (the region is retained): read by every
     * {@code sge(mr, ...)} of the data path, so kept here rather than asked of the region (an interface call and
     * its open check) each time.
     */
    private final long address;
    private final long length;
    private final int access;
    private final int lkey;
    private final int rkey;
    /** Holds in progress (bits 30:0) and {@link #RETIRED}. */
    @SuppressWarnings("unused") // through HOLDS
    private volatile int holds;
    /** Memory windows bound to this MR now. */
    private final java.util.concurrent.atomic.AtomicInteger boundWindows = new java.util.concurrent.atomic.AtomicInteger();

    protected MemoryRegion(ProtectionDomain pd, DmaRegion region, long offset, long length, int access, int lkey, int rkey) {
        super("MR", pd);
        region.retain();
        this.pd = pd;
        this.region = region;
        this.offset = offset;
        this.address = region.address() + offset;
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
        return address;
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

    /** True if {@code [addr, addr + len)} lies inside this registration ({@link #spanContains}). */
    public final boolean contains(long addr, long len) {
        return spanContains(address, length, addr, len);
    }

    /**
     * True if {@code [addr, addr + len)} lies inside {@code [start, start + length)}, {@code length >= 0}. Addresses
     * are unsigned 64-bit (a RETH's VA, an IOVA), so the offset is compared unsigned: an address below the start wraps
     * to an offset past any length, and a span across 2^63 keeps its upper half. Overflow-safe: nothing is added.
     */
    public static boolean spanContains(long start, long length, long addr, long len) {
        return len >= 0 && len <= length && Long.compareUnsigned(addr - start, length - len) <= 0;
    }

    @Override
    public String describe() {
        return "MR lkey=0x" + Integer.toHexString(lkey);
    }

    /**
     * Provider side: keeps this registration, and so its memory, from going away until {@link #unhold()}; false
     * if it is being (or was) deregistered, in which case its memory must not be touched. One CAS; hold only
     * around a copy, never across a blocking call.
     */
    public final boolean hold() {
        int h;
        do {
            h = holds;
            if ((h & RETIRED) != 0) {
                return false;
            }
        } while (!HOLDS.compareAndSet(this, h, h + 1));
        return true;
    }

    /** Provider side: ends a {@link #hold()} that returned true. */
    public final void unhold() {
        HOLDS.getAndAdd(this, -1);
    }

    /** Memory windows bound to this MR now: while there are any, it refuses to deregister. */
    public final int boundWindows() {
        return boundWindows.get();
    }

    /** Provider side: a memory window was bound to this MR. */
    public final void windowBound() {
        boundWindows.incrementAndGet();
    }

    /** Provider side: a memory window bound to this MR was unbound, invalidated or deallocated. */
    public final void windowUnbound() {
        boundWindows.decrementAndGet();
    }

    @Override
    void beforeDestroy() {
        int n = boundWindows.get();
        if (n > 0) {
            // IBTA 10.6.7.2.6; Linux rxe_dereg_mr refuses an MR with windows bound (EINVAL there)
            throw new VerbsException(VerbsException.EBUSY, "cannot deregister " + describe() + ": " + n
                    + " memory window" + (n > 1 ? "s are" : " is") + " bound to it; invalidate or deallocate "
                    + (n > 1 ? "them" : "it") + " first");
        }
    }

    @Override
    protected final void destroy() {
        HOLDS.getAndBitwiseOr(this, RETIRED);
        // holds last one copy each: wait for those in progress, new ones are refused from here on
        for (int spins = 0; (holds & ~RETIRED) != 0; spins++) {
            if (spins < 1000) {
                Thread.onSpinWait();
            } else {
                Thread.yield();
            }
        }
        deregister();
        region.release();
    }

    /** Provider side: forget the keys. */
    protected abstract void deregister();
}
