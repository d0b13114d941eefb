package io.jhca.memory;

/**
 * A region that owns its mapping: on close it asks the translator to unmap it from the device, then unlocks
 * and unmaps the pages.
 */
final class MappedRegion extends AbstractDmaRegion {

    private final long mappedLength;
    private final boolean locked;

    MappedRegion(final long address, final long length, final long mappedLength, final long pageSize,
                 final boolean locked, final IovaTranslator translator) {
        super(address, length, pageSize, translator);
        this.mappedLength = mappedLength;
        this.locked = locked;
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
            DmaMemory.unmap(address, mappedLength);
        }
    }

    @Override
    String kind() {
        return "region";
    }
}
