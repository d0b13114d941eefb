package io.jhca.connectx;

import io.jhca.doorbell.MmioWindow;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * BAR0 of an in-process function as the driver gets it: the same window over the model's registers, whose stores
 * also wake the firmware thread if it sleeps ({@link ModelSleeper#afterMmioWrite}). A device notices a register write
 * by itself; the model, which notices it by reading memory, would otherwise have to keep looking.
 */
final class ModelBar extends MmioWindow {

    private final ModelSleeper firmware;

    ModelBar(UnsafeBuffer registers, ModelSleeper firmware) {
        super(registers);
        this.firmware = firmware;
    }

    @Override
    protected void store32(int offset, int deviceOrder) {
        super.store32(offset, deviceOrder);
        firmware.afterMmioWrite(offset);
    }

    @Override
    protected void store64(int offset, long deviceOrder) {
        super.store64(offset, deviceOrder);
        firmware.afterMmioWrite(offset);
    }

    @Override
    protected void storeDoorbell64(int offset, long deviceOrder) {
        super.storeDoorbell64(offset, deviceOrder);
        firmware.afterMmioWrite(offset);
    }

    @Override
    protected void storeChunkWord(int offset, long verbatim) {
        super.storeChunkWord(offset, verbatim);
        firmware.afterMmioWrite(offset);
    }
}
