package io.jhca.rxe.transport;

import org.agrona.DirectBuffer;
import org.agrona.UnsafeApi;

import io.jhca.rxe.PageListRegion;
import io.jhca.verbs.Access;
import io.jhca.verbs.MemoryRegion;
import io.jhca.verbs.ProtectionDomain;

/**
 * Every access of the engine to registered memory goes through here: the key is looked up, the MR must belong
 * to the QP's PD, grant the access and contain the whole span ({@link MemoryRegion#contains}) before a single
 * byte is copied. A span that fails any check is refused with a status, never touched.
 *
 * <p>An MR's addresses are host addresses, except for an MR over a {@link PageListRegion} (a device model's memory
 * key): there every copy goes through the page list, one page at a time.
 */
final class MemoryAccess {

    static final int OK = 0;
    static final int BAD_KEY = 1;
    static final int BAD_PD = 2;
    static final int NO_ACCESS = 3;
    static final int OUT_OF_BOUNDS = 4;

    private final MrTable mrs;

    MemoryAccess(final MrTable mrs) {
        this.mrs = mrs;
    }

    /** Checks one local SGE; {@code needWrite}: the engine will write into it. */
    int checkLocal(final ProtectionDomain pd, final long addr, final int length, final int lkey, final boolean needWrite) {
        if (length == 0) {
            return OK; // zero-length SGEs are not looked up (rxe copy_data)
        }
        final MemoryRegion mr = mrs.byLkey(lkey);
        if (mr == null) {
            return BAD_KEY;
        }
        if (mr.pd() != pd) {
            return BAD_PD;
        }
        if (needWrite && (mr.access() & Access.LOCAL_WRITE.bit()) == 0) {
            return NO_ACCESS;
        }
        return mr.contains(addr, length & 0xFFFFFFFFL) ? OK : OUT_OF_BOUNDS;
    }

    /**
     * The MR a remote request to {@code qp} may use, or null: rkey known, same PD, access granted, span inside.
     * An rkey that names no MR may name a memory window ({@link Window#check}): then the window's state, PD, QP,
     * rights and bounds decide, and the MR behind it must still be registered.
     */
    MemoryRegion checkRemote(final TransportQp qp, final int rkey, final long va, final long length,
            final int accessBit) {
        final MemoryRegion mr = mrs.byRkey(rkey);
        if (mr == null) {
            final Window w = mrs.windowAt(rkey);
            final MemoryRegion behind = w == null ? null : w.check(qp, rkey, va, length, accessBit);
            return behind != null && mrs.byLkey(behind.lkey()) == behind ? behind : null;
        }
        if (mr.pd() != qp.pd || (mr.access() & accessBit) == 0 || !mr.contains(va, length)) {
            return null;
        }
        return mr;
    }

    /** The registered MR whose lkey is {@code lkey}, or null. */
    MemoryRegion mrByLkey(final int lkey) {
        return mrs.byLkey(lkey);
    }

    /** The window whose index {@code key} names, or null. */
    Window windowAt(final int key) {
        return mrs.windowAt(key);
    }

    /**
     * Copies {@code length} bytes at logical offset {@code offset} of an SGE list into {@code dst} at
     * {@code dstIndex}. Returns OK or the failing check.
     */
    int gather(final ProtectionDomain pd, final long[] addr, final int[] len, final int[] lkey, final int numSge,
            final long offset, final DirectBuffer dst, final int dstIndex, final int length) {
        dst.boundsCheck(dstIndex, length);
        long skip = offset;
        int done = 0;
        for (int i = 0; i < numSge && done < length; i++) {
            final long sgeLen = len[i] & 0xFFFFFFFFL;
            if (skip >= sgeLen) {
                skip -= sgeLen;
                continue;
            }
            final int n = (int) Math.min(sgeLen - skip, length - done);
            final long from = addr[i] + skip;
            final int status = checkLocal(pd, from, n, lkey[i], false);
            if (status != OK) {
                return status;
            }
            read(mrs.byLkey(lkey[i]), from, dst, dstIndex + done, n);
            done += n;
            skip = 0;
        }
        return done == length ? OK : OUT_OF_BOUNDS;
    }

    /** Copies {@code length} bytes of {@code src} into an SGE list at logical offset {@code offset}. */
    int scatter(final ProtectionDomain pd, final long[] addr, final int[] len, final int[] lkey, final int numSge,
            final long offset, final DirectBuffer src, final int srcIndex, final int length) {
        src.boundsCheck(srcIndex, length);
        long skip = offset;
        int done = 0;
        for (int i = 0; i < numSge && done < length; i++) {
            final long sgeLen = len[i] & 0xFFFFFFFFL;
            if (skip >= sgeLen) {
                skip -= sgeLen;
                continue;
            }
            final int n = (int) Math.min(sgeLen - skip, length - done);
            final long to = addr[i] + skip;
            final int status = checkLocal(pd, to, n, lkey[i], true);
            if (status != OK) {
                return status;
            }
            write(src, srcIndex + done, mrs.byLkey(lkey[i]), to, n);
            done += n;
            skip = 0;
        }
        return done == length ? OK : OUT_OF_BOUNDS;
    }

    /** Copies from a checked remote span of {@code mr} (see {@link #checkRemote}) into {@code dst}. */
    static void readRemote(final MemoryRegion mr, final long va, final DirectBuffer dst, final int dstIndex,
            final int length) {
        dst.boundsCheck(dstIndex, length);
        read(mr, va, dst, dstIndex, length);
    }

    /** Copies into a checked remote span of {@code mr}. */
    static void writeRemote(final DirectBuffer src, final int srcIndex, final MemoryRegion mr, final long va,
            final int length) {
        src.boundsCheck(srcIndex, length);
        write(src, srcIndex, mr, va, length);
    }

    /** The host address of a checked, 8-byte aligned atomic target (never across a page: pages are 4 KiB or more). */
    static long atomicTarget(final MemoryRegion mr, final long va) {
        return mr.region() instanceof PageListRegion pages ? pages.hostAddress(va) : va;
    }

    /** Bounds already checked: {@code [va, va + n)} inside {@code mr}, {@code [index, index + n)} inside the buffer. */
    private static void read(final MemoryRegion mr, final long va, final DirectBuffer dst, final int index, final int n) {
        if (!(mr != null && mr.region() instanceof PageListRegion pages)) {
            UnsafeApi.copyMemory(null, va, dst.byteArray(), dst.addressOffset() + index, n);
            return;
        }
        for (int done = 0; done < n; ) {
            final int c = pages.contiguousBytes(va + done, n - done);
            UnsafeApi.copyMemory(null, pages.hostAddress(va + done), dst.byteArray(), dst.addressOffset() + index + done, c);
            done += c;
        }
    }

    private static void write(final DirectBuffer src, final int index, final MemoryRegion mr, final long va, final int n) {
        if (!(mr != null && mr.region() instanceof PageListRegion pages)) {
            UnsafeApi.copyMemory(src.byteArray(), src.addressOffset() + index, null, va, n);
            return;
        }
        for (int done = 0; done < n; ) {
            final int c = pages.contiguousBytes(va + done, n - done);
            UnsafeApi.copyMemory(src.byteArray(), src.addressOffset() + index + done, null, pages.hostAddress(va + done), c);
            done += c;
        }
    }
}
