package io.jhca.rxe.transport;

import io.jhca.rxe.wire.Psn;

/**
 * The responder's record of recent READ and atomic requests (rxe "responder resources", qp->resp.resources):
 * a ring of max_dest_rd_atomic entries (rounded up to a power of two) recycled oldest first. A duplicate READ is
 * answered by replaying from its entry; a duplicate atomic gets the cached original value, so an atomic is never
 * executed twice. Preallocated for the device maximum (128, rxe_param.h RXE_MAX_QP_RD_ATOM).
 */
final class ResponderResources {

    static final int MAX = 128;

    static final class Entry {
        boolean valid;
        boolean atomic;
        int firstPsn;
        int lastPsn;
        long va;
        int rkey;
        long length;
        long original;

        /**
         * True if [va, va + len) lies inside this READ's span. Unsigned and without a sum that can wrap: a
         * duplicate's VA near 2^63 or 2^64 must not pass for one inside the span.
         */
        boolean covers(final long va, final long len) {
            return Long.compareUnsigned(va, this.va) >= 0 && Long.compareUnsigned(len, length) <= 0
                    && Long.compareUnsigned(va - this.va, length - len) <= 0;
        }
    }

    private final Entry[] entries = new Entry[MAX];
    private int size = 1;
    private int next;

    ResponderResources() {
        for (int i = 0; i < MAX; i++) {
            entries[i] = new Entry();
        }
    }

    void resize(final int maxDestRdAtomic) {
        size = Math.min(MAX, SendRing.powerOfTwo(Math.max(1, maxDestRdAtomic)));
        clear();
    }

    void clear() {
        for (final Entry e : entries) {
            e.valid = false;
        }
        next = 0;
    }

    Entry allocate() {
        final Entry e = entries[next];
        next = (next + 1) & (size - 1);
        e.valid = true;
        return e;
    }

    /** The READ whose PSN range holds {@code psn}, or null. */
    Entry findRead(final int psn) {
        for (int i = 0; i < size; i++) {
            final Entry e = entries[i];
            if (e.valid && !e.atomic && Psn.compare(psn, e.firstPsn) >= 0 && Psn.compare(psn, e.lastPsn) <= 0) {
                return e;
            }
        }
        return null;
    }

    /** The atomic sent with {@code psn}, or null. */
    Entry findAtomic(final int psn) {
        for (int i = 0; i < size; i++) {
            final Entry e = entries[i];
            if (e.valid && e.atomic && e.firstPsn == psn) {
                return e;
            }
        }
        return null;
    }
}
