package io.jhca.rxe;

import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.memory.DmaRegion;
import io.jhca.memory.RefCountedDmaRegion;

/**
 * Memory known by a list of pages, as Linux rxe's MRs are (an xarray of pages behind the MR's iova): the span
 * {@code [va, va + length)} of some address space, whose page {@code i} (counted from {@code va} rounded down to
 * the page size) lies at host address {@code hostPages[i]}. For a device model that registers its memory keys on
 * the rxe transport: the key's addresses are the driver's (a guest's virtual addresses), the bytes are wherever
 * the key's translation table puts them in the model's view of RAM, one page here, the next elsewhere. The rxe
 * engine copies page by page through the list; nothing else may touch the bytes through this object:
 * {@link #buffer()} is refused.
 *
 * <p>It does not own the pages: closing it only marks it closed (refused while registered; the lifetime is
 * {@link RefCountedDmaRegion}'s).
 */
public final class PageListRegion extends RefCountedDmaRegion {

    private final long va;
    private final long length;
    private final int pageShift;
    private final long pageMask;
    private final long[] hostPages;

    /**
     * @param va        first address of the span in the key's address space
     * @param length    bytes, at least 1
     * @param pageShift log2 of the page size, 12 to 30
     * @param hostPages host address of each page touched by the span, in order; none 0
     */
    public PageListRegion(long va, long length, int pageShift, long[] hostPages) {
        if (pageShift < 12 || pageShift > 30) {
            throw new IllegalArgumentException("page shift " + pageShift + " outside 12..30");
        }
        if (length <= 0 || Long.compareUnsigned(va + length - 1, va) < 0) {
            throw new IllegalArgumentException(String.format("bad span 0x%x + %d", va, length));
        }
        this.pageMask = (1L << pageShift) - 1;
        long pages = (((va & pageMask) + length - 1) >>> pageShift) + 1;
        if (hostPages.length != pages) {
            throw new IllegalArgumentException(String.format("span 0x%x + %d touches %d pages of %d bytes, %d host "
                    + "pages given", va, length, pages, 1L << pageShift, hostPages.length));
        }
        for (int i = 0; i < hostPages.length; i++) {
            if (hostPages[i] == 0 || (hostPages[i] & pageMask & 0xfff) != 0) {
                throw new IllegalArgumentException(String.format("host page %d at 0x%x: null or not 4 KiB aligned", i,
                        hostPages[i]));
            }
        }
        this.va = va;
        this.length = length;
        this.pageShift = pageShift;
        this.hostPages = hostPages.clone();
    }

    /**
     * The host address of {@code address} of the span (the caller has checked it lies inside, as the rxe engine does
     * through the MR before every copy).
     */
    public long hostAddress(long address) {
        long off = address - (va & ~pageMask);
        return hostPages[(int) (off >>> pageShift)] + (off & pageMask);
    }

    /** How many of {@code wanted} bytes from {@code address} lie in the same page (at least 1). */
    public int contiguousBytes(long address, int wanted) {
        long toPageEnd = pageMask + 1 - (address & pageMask);
        return (int) Math.min(wanted, toPageEnd);
    }

    @Override
    protected String closedMessage() {
        return "page list region is closed";
    }

    @Override
    protected void onClosed() {
        // the pages belong to their owner: nothing to release
    }

    /** The span's first address in the key's address space (not a host address). */
    @Override
    public long address() {
        ensureOpen();
        return va;
    }

    @Override
    public long length() {
        ensureOpen();
        return length;
    }

    @Override
    public long pageSize() {
        return pageMask + 1;
    }

    /** The key's own address: the device resolves it through the page list itself. */
    @Override
    public long iova(long offset) {
        ensureOpen();
        if (offset < 0 || offset >= length) {
            throw new IndexOutOfBoundsException("offset " + offset + " outside a span of " + length + " bytes");
        }
        return va + offset;
    }

    @Override
    public UnsafeBuffer buffer() {
        throw new UnsupportedOperationException("a page list region has no contiguous view: the rxe engine copies"
                + " through its pages");
    }

    @Override
    public UnsafeBuffer buffer(long offset, int len) {
        throw new UnsupportedOperationException("a page list region has no contiguous view: the rxe engine copies"
                + " through its pages");
    }

    @Override
    public DmaRegion slice(long offset, long len) {
        throw new UnsupportedOperationException("page list regions are registered whole");
    }

    @Override
    public String toString() {
        return String.format("pages[0x%x, +%d), %d pages of %d bytes", va, length, hostPages.length, pageMask + 1);
    }
}
