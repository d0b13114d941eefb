package io.jhca.doorbell;

import java.util.function.IntSupplier;

import org.agrona.concurrent.UnsafeBuffer;

/** An MMIO window that logs every store it makes (offset, width, kind) and a probe value seen at that moment. */
final class RecordingMmioWindow extends MmioWindow {

    static final int VOLATILE = 1;
    static final int CHUNK_WORD = 2;
    /** A send doorbell on an uncached x86-64 mapping: a release store, no fence. */
    static final int DOORBELL = 3;

    private final int[] offsets = new int[4096];
    private final int[] widths = new int[4096];
    private final int[] kinds = new int[4096];
    private final int[] probes = new int[4096];
    private int count;
    private IntSupplier probe = () -> 0;

    RecordingMmioWindow(UnsafeBuffer memory) {
        super(memory);
    }

    RecordingMmioWindow(UnsafeBuffer memory, boolean writeCombining) {
        super(memory, writeCombining);
    }

    /** What to sample at each store, e.g. the doorbell record's counter. */
    void probe(IntSupplier probe) {
        this.probe = probe;
    }

    void clear() {
        count = 0;
    }

    int count() {
        return count;
    }

    int offset(int i) {
        return offsets[i];
    }

    int width(int i) {
        return widths[i];
    }

    int kind(int i) {
        return kinds[i];
    }

    int probed(int i) {
        return probes[i];
    }

    private void log(int offset, int width, int kind) {
        offsets[count] = offset;
        widths[count] = width;
        kinds[count] = kind;
        probes[count] = probe.getAsInt();
        count++;
    }

    @Override
    protected void store32(int offset, int deviceOrder) {
        log(offset, 4, VOLATILE);
        super.store32(offset, deviceOrder);
    }

    @Override
    protected void store64(int offset, long deviceOrder) {
        log(offset, 8, VOLATILE);
        super.store64(offset, deviceOrder);
    }

    @Override
    protected void storeDoorbell64(int offset, long deviceOrder) {
        log(offset, 8, DOORBELL);
        super.storeDoorbell64(offset, deviceOrder);
    }

    @Override
    protected void storeChunkWord(int offset, long verbatim) {
        log(offset, 8, CHUNK_WORD);
        super.storeChunkWord(offset, verbatim);
    }
}
