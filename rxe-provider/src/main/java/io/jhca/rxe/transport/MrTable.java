package io.jhca.rxe.transport;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import io.jhca.verbs.MemoryRegion;

/**
 * The device's memory keys, as rxe and the IBTA build them: key = 24-bit table index &lt;&lt; 8 | 8-bit tag
 * (rxe_mr.c: {@code lkey = index << 8 | key}). The tag changes each time an index is reused, so a stale key of a
 * deregistered MR is refused instead of reaching the new one. The rkey equals the lkey when any remote access
 * was asked for, else it is 0 (no remote access), as rxe does. Memory windows ({@link Window}) take indexes from
 * the same table (rxe keeps MR and MW indexes in disjoint ranges to the same end), so a remote rkey names one or the
 * other; a window's key byte changes with each bind, so it is matched by the window, not by the table's tag.
 *
 * <p>Registration and deregistration run on application threads (synchronized); lookups run on the
 * engine without locks ({@link #byLkey}, {@link #byRkey}): slots are published with release stores and read with acquire loads.
 */
public final class MrTable {

    private static final VarHandle SLOT = MethodHandles.arrayElementVarHandle(Object[].class);
    /** Index 0 is never used: key 0 means "no key" (rkey 0 = no remote access). */
    private static final int FIRST_INDEX = 1;
    private static final int MAX_INDEX = 0xFFFFFF;

    /** MemoryRegion or {@link Window}: MRs and windows share the key space, as a remote rkey may name either. */
    private volatile Object[] slots = new Object[256];
    private byte[] tags = new byte[256];
    private int[] free = new int[16];
    private int freeCount;
    private int nextIndex = FIRST_INDEX;
    private int live;

    /** Reserves a key (index + fresh tag) for a registration about to be made. */
    public synchronized int reserveKey() {
        int index;
        if (freeCount > 0) {
            index = free[--freeCount];
        } else {
            if (nextIndex > MAX_INDEX) {
                throw new IllegalStateException("no free memory key index (2^24 registrations)");
            }
            index = nextIndex++;
            if (index >= slots.length) {
                grow(index);
            }
        }
        tags[index]++;
        return index << 8 | (tags[index] & 0xFF);
    }

    private void grow(final int index) {
        int n = slots.length;
        while (n <= index) {
            n <<= 1;
        }
        final Object[] s = java.util.Arrays.copyOf(slots, n);
        tags = java.util.Arrays.copyOf(tags, n);
        slots = s; // volatile write publishes the copied entries
    }

    /** Makes {@code mr} reachable by its key (reserved with {@link #reserveKey}). */
    public synchronized void publish(final int key, final MemoryRegion mr) {
        SLOT.setRelease(slots, key >>> 8, mr);
        live++;
    }

    /** Makes a window reachable by its index (reserved with {@link #reserveKey}); its key byte changes with binds. */
    public synchronized void publishWindow(final int key, final Window w) {
        SLOT.setRelease(slots, key >>> 8, w);
    }

    /** Forgets a window's index; reused later. */
    public synchronized void removeWindow(final int key) {
        final int index = key >>> 8;
        final Object[] s = slots;
        if (index < s.length && SLOT.getAcquire(s, index) instanceof Window) {
            SLOT.setRelease(s, index, null);
        }
        if (freeCount == free.length) {
            free = java.util.Arrays.copyOf(free, free.length * 2);
        }
        free[freeCount++] = index;
    }

    /** The window at {@code key}'s index whatever its key byte, or null. Engine side. */
    public Window windowAt(final int key) {
        final int index = key >>> 8;
        final Object[] s = slots;
        return index < s.length && SLOT.getAcquire(s, index) instanceof Window w ? w : null;
    }

    /** Forgets the key; the index is reused later with another tag. The caller makes sure the engine saw it. */
    public synchronized void remove(final int key) {
        final int index = key >>> 8;
        final Object[] s = slots;
        if (index < s.length && SLOT.getAcquire(s, index) instanceof MemoryRegion) {
            SLOT.setRelease(s, index, null);
            live--;
        }
        if (freeCount == free.length) {
            free = java.util.Arrays.copyOf(free, free.length * 2);
        }
        free[freeCount++] = index;
    }

    /** Releases a reserved key that was never published. */
    public synchronized void unreserve(final int key) {
        if (freeCount == free.length) {
            free = java.util.Arrays.copyOf(free, free.length * 2);
        }
        free[freeCount++] = key >>> 8;
    }

    /**
     * Reserves a key chosen by the caller, for a device model that hands out its own memory keys (an mlx5 mkey
     * is index &lt;&lt; 8 | the driver's tag byte) and mirrors them here so the same key works on the wire.
     * Refuses an index in use; the skipped indices below it stay free for {@link #reserveKey()}.
     */
    public synchronized int reserveChosenKey(final int key) {
        final int index = key >>> 8;
        if (index < FIRST_INDEX) {
            throw new IllegalArgumentException(String.format("memory key 0x%08x: index 0 is reserved", key));
        }
        if (index >= nextIndex) {
            if (index - nextIndex > 1 << 16) {
                throw new IllegalArgumentException(String.format("memory key 0x%08x: index too far ahead of %d", key, nextIndex));
            }
            if (index >= slots.length) {
                grow(index);
            }
            for (int i = nextIndex; i < index; i++) {
                if (freeCount == free.length) {
                    free = java.util.Arrays.copyOf(free, free.length * 2);
                }
                free[freeCount++] = i;
            }
            nextIndex = index + 1;
        } else {
            int at = -1;
            for (int i = 0; i < freeCount; i++) {
                if (free[i] == index) {
                    at = i;
                    break;
                }
            }
            if (at < 0) {
                throw new IllegalStateException(String.format("memory key 0x%08x: index %d is in use", key, index));
            }
            free[at] = free[--freeCount];
        }
        tags[index] = (byte) key;
        return key;
    }

    /** The MR whose lkey is {@code lkey}, or null. Engine side, lock-free. */
    public MemoryRegion byLkey(final int lkey) {
        final MemoryRegion mr = slot(lkey);
        return mr != null && mr.lkey() == lkey ? mr : null;
    }

    /** The MR whose (non-zero) rkey is {@code rkey}, or null. */
    public MemoryRegion byRkey(final int rkey) {
        if (rkey == 0) {
            return null;
        }
        final MemoryRegion mr = slot(rkey);
        return mr != null && mr.rkey() == rkey ? mr : null;
    }

    private MemoryRegion slot(final int key) {
        final int index = key >>> 8;
        final Object[] s = slots;
        return index < s.length && SLOT.getAcquire(s, index) instanceof MemoryRegion mr ? mr : null;
    }

    public synchronized int liveCount() {
        return live;
    }
}
