package io.jhca.memory;

/**
 * A region that owns its mapping: on close it asks the translator to unmap it from the device, then unlocks
 * the pages and lets {@link RegionMapping} unmap them (at once, or once no buffer view can reach them).
 */
final class MappedRegion extends AbstractDmaRegion {

    private final long mappedLength;
    private final boolean locked;
    private volatile RegionMapping mapping;

    MappedRegion(final long address, final long length, final long mappedLength, final long pageSize,
                 final boolean locked, final IovaTranslator translator) {
        super(address, length, pageSize, translator);
        this.mappedLength = mappedLength;
        this.locked = locked;
        this.mapping = new RegionMapping(address, mappedLength);
    }

    @Override
    RegionMapping mapping() {
        return mapping;
    }

    /** The mapped length: {@link #length()} rounded up to the page size. */
    long mappedLength() {
        ensureOpen();
        return mappedLength;
    }

    /** True when the pages were pinned with mlock. */
    boolean locked() {
        ensureOpen();
        return locked;
    }

    @Override
    void onClose() {
        try {
            translator.unmap(address, mappedLength);
        } finally {
            if (locked) {
                // munmap unlocks too; unlocking first keeps the order the reverse of allocation.
                LibC.INSTANCE.munlock(LibC.pointer(address), mappedLength);
            }
            final RegionMapping m = mapping;
            // dropped first so a closed region object that stays reachable does not keep the range mapped
            mapping = null;
            m.release();
        }
    }

    @Override
    String kind() {
        return "region";
    }
}
