package io.jhca.connectx;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import io.jhca.mlx5.cmd.Field;

/**
 * A queue buffer as the device sees it: the list of pages a command's PAS array names (big-endian 64-bit IOVAs of
 * pages of {@code 4 KiB << log_page_size}, mlx5_ifc {@code pas[]}), each resolved once through the {@link Iommu} to a
 * host address when the object is created. Entries (WQEBBs, CQEs, EQEs: 64 bytes, naturally aligned) never straddle a
 * page, so each is one {@link #wrap} of one page.
 */
final class PagedBuffer {

    /** How building one failed (the command then fails with BAD_PARAM and this reason as the syndrome's cause). */
    static final class Fault extends Exception {
        private static final long serialVersionUID = 1L;
        final int syndrome;

        Fault(int syndrome, String message) {
            super(message, null, false, false);
            this.syndrome = syndrome;
        }
    }

    private final long[] pageHost;
    private final long[] pageIova;
    private final int pageShift;
    private final long length;

    private PagedBuffer(long[] pageHost, long[] pageIova, int pageShift, long length) {
        this.pageHost = pageHost;
        this.pageIova = pageIova;
        this.pageShift = pageShift;
        this.length = length;
    }

    /**
     * Resolves the first pages of {@code pas} covering {@code length} bytes.
     *
     * @param in          the command input holding the PAS array
     * @param pas         the {@code pas} field of the command layout
     * @param available   PAS entries present in the input (from its length)
     * @param logPageSize the context's log_page_size: page = 4 KiB &lt;&lt; it (MLX5_ADAPTER_PAGE_SHIFT 12)
     */
    static PagedBuffer resolve(Iommu iommu, DirectBuffer in, Field pas, int available, int logPageSize, long length)
            throws Fault {
        if (logPageSize < 0 || logPageSize > 18) {
            throw new Fault(CmdSyndromes.BAD_LOG_PAGE_SIZE, "log_page_size " + logPageSize + " out of range");
        }
        int shift = 12 + logPageSize;
        long page = 1L << shift;
        long pages = (length + page - 1) >>> shift;
        if (length <= 0 || pages > Integer.MAX_VALUE) {
            throw new Fault(CmdSyndromes.BAD_QUEUE_SIZE, "queue of " + length + " bytes");
        }
        if (pages > available) {
            throw new Fault(CmdSyndromes.PAS_TOO_SHORT, "the queue needs " + pages + " PAS entries, the command has "
                    + available);
        }
        long[] host = new long[(int) pages];
        long[] iova = new long[(int) pages];
        for (int i = 0; i < pages; i++) {
            long a = pas.getElement(in, 0, i); // big-endian 64-bit page address
            if ((a & (page - 1)) != 0) {
                throw new Fault(CmdSyndromes.PAS_MISALIGNED, String.format("PAS[%d] 0x%x not aligned to %d", i, a,
                        page));
            }
            long need = Math.min(page, length - ((long) i << shift));
            long h = iommu.hostAddress(a, need);
            if (h < 0) {
                throw new Fault(CmdSyndromes.PAS_NOT_MAPPED, String.format("PAS[%d] 0x%x (+%d) is not DMA-mapped", i,
                        a, need));
            }
            host[i] = h;
            iova[i] = a;
        }
        return new PagedBuffer(host, iova, shift, length);
    }

    long length() {
        return length;
    }

    /** Points {@code view} at {@code [offset, offset + len)}, which must lie inside one page. */
    void wrap(UnsafeBuffer view, long offset, int len) {
        int p = (int) (offset >>> pageShift);
        long in = offset & ((1L << pageShift) - 1);
        if (offset < 0 || offset + len > length || in + len > (1L << pageShift)) {
            throw new IndexOutOfBoundsException("[" + offset + ", +" + len + ") crosses a page or the end of a "
                    + length + "-byte queue");
        }
        view.wrap(pageHost[p] + in, len);
    }

    /** Whether any page of this buffer lies in {@code [iova, iova + len)} (for unmapping). */
    boolean overlapsIova(long iova, long len) {
        long page = Math.min(1L << pageShift, length);
        for (long a : pageIova) {
            if (a < iova + len && iova < a + page) {
                return true;
            }
        }
        return false;
    }

    /** The whole buffer as one view, when its pages follow each other in host memory; otherwise an exception. */
    UnsafeBuffer contiguousView() {
        long page = 1L << pageShift;
        for (int i = 1; i < pageHost.length; i++) {
            if (pageHost[i] != pageHost[0] + i * page) {
                throw new IllegalStateException("page " + i + " of the queue is not contiguous in host memory");
            }
        }
        if (length > Integer.MAX_VALUE) {
            throw new IllegalStateException("queue of " + length + " bytes is too long for one view");
        }
        return new UnsafeBuffer(pageHost[0], (int) length);
    }
}
