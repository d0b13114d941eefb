package io.jhca.memory;

import static io.jhca.memory.LinuxConstants.MAP_ANONYMOUS;
import static io.jhca.memory.LinuxConstants.MAP_FAILED;
import static io.jhca.memory.LinuxConstants.MAP_FIXED;
import static io.jhca.memory.LinuxConstants.MAP_NORESERVE;
import static io.jhca.memory.LinuxConstants.MAP_PRIVATE;
import static io.jhca.memory.LinuxConstants.PROT_READ;
import static io.jhca.memory.LinuxConstants.PROT_WRITE;

import java.lang.ref.Cleaner;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;

import jnr.ffi.Pointer;

/**
 * The address range of one mapped region, shared by the region, its slices and every buffer view they handed
 * out. It decides when the range may be unmapped: a view can be held by any thread, and touching an unmapped
 * page is a SIGSEGV, not an exception.
 *
 * <p>On close the views of the closing region (or slice) are rewrapped to nothing, so later accesses throw.
 * When the region itself closes and no view is reachable any more the range is unmapped at once. Otherwise the
 * pinned (or huge) pages are swapped at once for fresh unpopulated anonymous pages ({@code MAP_FIXED}, one
 * atomic step in the kernel, mmap(2)): the locked and huge-page memory goes back to the system now, an access
 * still in flight through a view reads harmless zeroes, and the address range is unmapped by a {@link Cleaner}
 * once neither the region nor any view can reach this object.
 */
final class RegionMapping {

    private static final Cleaner CLEANER = Cleaner.create();
    /** Prune cleared weak references once the list grows past this (doubled each time it stays full). */
    private static final int FIRST_PRUNE = 16;

    final long address;
    final long mappedLength;
    /** Views handed out and perhaps still reachable; guarded by {@code this}. */
    private final List<WeakReference<DmaView>> views = new ArrayList<>();
    private int pruneAt = FIRST_PRUNE;

    RegionMapping(final long address, final long mappedLength) {
        this.address = address;
        this.mappedLength = mappedLength;
    }

    /**
     * A new view over {@code [viewAddress, viewAddress + length)} owned by {@code owner}; checked against the
     * owner's state under this object's lock, so a view is never handed out after its owner's close retired
     * the views.
     */
    synchronized DmaView view(final AbstractDmaRegion owner, final long viewAddress, final int length) {
        owner.ensureOpen();
        final DmaView view = new DmaView(this, owner, viewAddress, length);
        if (views.size() >= pruneAt) {
            views.removeIf(r -> r.get() == null);
            pruneAt = Math.max(FIRST_PRUNE, views.size() * 2);
        }
        views.add(new WeakReference<>(view));
        return view;
    }

    /** Rewraps every view {@code owner} handed out to nothing (after {@code owner} turned closed). */
    synchronized void retireViews(final AbstractDmaRegion owner) {
        views.removeIf(r -> {
            final DmaView view = r.get();
            if (view == null) {
                return true;
            }
            if (view.owner == owner) {
                view.retire();
                return true;
            }
            return false;
        });
    }

    /**
     * Retires all views and lets the range go: at once when no view is reachable, otherwise after
     * {@code releasePages} swapped the pages out and the last view became unreachable. Called once, when the
     * owning region closes (its slices are all closed by then).
     */
    void release() {
        final boolean viewsAlive;
        synchronized (this) {
            // the region's own views and those of its slices (already retired when each slice closed)
            views.removeIf(r -> {
                final DmaView view = r.get();
                if (view != null) {
                    view.retire();
                }
                return view == null;
            });
            viewsAlive = !views.isEmpty();
            views.clear();
        }
        if (!viewsAlive) {
            DmaMemory.unmap(address, mappedLength);
            return;
        }
        replaceWithEmptyPages();
        CLEANER.register(this, new Unmap(address, mappedLength));
    }

    /** MAP_FIXED over the whole range: drops the old pages (and their lock) in one step, keeps the range mapped. */
    private void replaceWithEmptyPages() {
        final Pointer p = LibC.INSTANCE.mmap(LibC.pointer(address), mappedLength, PROT_READ | PROT_WRITE,
            MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE, -1, 0);
        if (p == null || p.address() == MAP_FAILED) {
            throw new DmaMemoryException("mmap(MAP_FIXED) over a closed region's 0x" + Long.toHexString(address) + "+"
                + mappedLength + " failed: " + LibC.describe(LibC.errno()) + "; its pages stay mapped");
        }
    }

    /** The deferred munmap; holds no reference to the mapping object (a Cleaner action must not). */
    private record Unmap(long address, long mappedLength) implements Runnable {
        @Override
        public void run() {
            DmaMemory.unmap(address, mappedLength);
        }
    }
}
