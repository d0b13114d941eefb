package io.jhca.mlx5.cmd;

import java.util.concurrent.TimeUnit;

/**
 * Reads the health registers of the initialization segment as mlx5_core's health poller does (health.c
 * {@code poll_health}): the function is gone when BAR0 reads all ones ({@code sensor_pci_not_working}: fw_ver
 * 0xffffffff), sick when firmware reports a health syndrome, stuck when the health counter stands still for the stall
 * time (mlx5_core: three missed polls of 2 s). One instance per watcher; not thread-safe.
 */
public final class DeviceHealth {

    private final InitSegment iseg;
    private final long stallNanos;
    private int counter;
    private long counterSince;

    /** Starts watching at {@code now} (System.nanoTime()). */
    public DeviceHealth(InitSegment iseg, long stallMillis, long now) {
        this.iseg = iseg;
        this.stallNanos = TimeUnit.MILLISECONDS.toNanos(stallMillis);
        this.counter = iseg.healthCounter();
        this.counterSince = now;
    }

    /** What is wrong with the device at {@code now}, or null while it looks alive. */
    public String check(long now) {
        if (iseg.healthFwVer() == 0xffffffff) {
            return "health fw_ver reads 0xffffffff: the function is gone from the bus (surprise removal, reset or"
                    + " PCI link down)";
        }
        int syndrome = iseg.healthSyndrome();
        if (syndrome != 0) {
            return String.format("firmware health syndrome 0x%x (%s), ext_synd 0x%x", syndrome,
                    InitSegment.describeHealthSyndrome(syndrome), iseg.healthExtSyndrome());
        }
        int c = iseg.healthCounter();
        if (c != counter) {
            counter = c;
            counterSince = now;
            return null;
        }
        if (now - counterSince >= stallNanos) {
            return String.format("firmware stuck: health counter frozen at 0x%x for %d ms", counter,
                    TimeUnit.NANOSECONDS.toMillis(now - counterSince));
        }
        return null;
    }
}
