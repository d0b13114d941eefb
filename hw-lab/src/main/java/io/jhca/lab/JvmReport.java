package io.jhca.lab;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Which JVM and collector ran a measurement, and how many collections happened while it ran: a JVM result is
 * only comparable to a C one when no GC pause fell into the measured phase. Counts come from the
 * GarbageCollectorMXBeans, read before and after.
 */
public final class JvmReport {
    private long cycles0;
    private long millis0;
    private long thread;
    private long allocated0;
    private long cycles;
    private long millis;
    private long allocated;
    private boolean allocationKnown = true;

    private JvmReport() {
    }

    /** Starts the first measured window, in the thread that runs the measured loop. */
    public static JvmReport start() {
        JvmReport r = new JvmReport();
        r.begin();
        return r;
    }

    /** Starts (another) measured window; windows add up. */
    public JvmReport begin() {
        long[] r = read();
        cycles0 = r[0];
        millis0 = r[1];
        thread = Thread.currentThread().getId();
        allocated0 = allocatedBytes(thread);
        return this;
    }

    /** Ends the current window. */
    public JvmReport stop() {
        // the thread's counter first: reading the collectors' counts allocates (their list), which is not the loop's
        if (allocated0 >= 0 && Thread.currentThread().getId() == thread) {
            allocated += allocatedBytes(thread) - allocated0;
        } else {
            allocationKnown = false;
        }
        long[] r = read();
        cycles += r[0] - cycles0;
        millis += r[1] - millis0;
        return this;
    }

    /**
     * Heap bytes the measuring thread allocated inside the windows (HotSpot's per-thread counter), or -1 if
     * unknown. The data path should make none; with a software device in caller progress mode the count
     * includes the device's work done in this thread.
     */
    public long allocatedBytes() {
        return allocationKnown ? allocated : -1;
    }

    /** HotSpot's per-thread allocation counter, looked up once (the lookup allocates, and would be counted). */
    private static final com.sun.management.ThreadMXBean THREADS = ManagementFactory.getThreadMXBean()
            instanceof com.sun.management.ThreadMXBean h && h.isThreadAllocatedMemorySupported() ? h : null;

    private static long allocatedBytes(long threadId) {
        if (THREADS != null && THREADS.isThreadAllocatedMemoryEnabled()) {
            return THREADS.getThreadAllocatedBytes(threadId);
        }
        return -1;
    }

    public long gcCycles() {
        return cycles;
    }

    public long gcMillis() {
        return millis;
    }

    private static long[] read() {
        long c = 0;
        long t = 0;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            c += Math.max(0, gc.getCollectionCount());
            t += Math.max(0, gc.getCollectionTime());
        }
        return new long[] {c, t};
    }

    /** "OpenJDK 64-Bit Server VM 17.0.15+6-Debian-1deb12u1 (mixed mode)". */
    public static String jvm() {
        return System.getProperty("java.vm.name") + " " + System.getProperty("java.vm.version")
                + " (" + System.getProperty("java.vm.info", "") + ")";
    }

    /** The collector in use, named from its MXBeans: G1, Parallel, Serial, ZGC, Shenandoah or Epsilon. */
    public static String gc() {
        List<String> names = new ArrayList<>();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            names.add(gc.getName());
        }
        String all = String.join(",", names);
        if (all.contains("G1")) {
            return "G1";
        }
        if (all.contains("ZGC")) {
            return "ZGC";
        }
        if (all.contains("Shenandoah")) {
            return "Shenandoah";
        }
        if (all.contains("PS ") || all.contains("Parallel")) {
            return "Parallel";
        }
        if (all.contains("Copy") || all.contains("MarkSweepCompact")) {
            return "Serial";
        }
        return names.isEmpty() ? "Epsilon (no collector)" : all;
    }

    /** " JVM: ... | GC: G1 | GC cycles during measurement: 0 (0 ms) | allocated by the measuring thread: 0 B". */
    public String footer() {
        return " JVM: " + jvm() + " | GC: " + gc() + " | GC cycles during measurement: " + cycles + " (" + millis + " ms)"
                + (allocatedBytes() >= 0 ? " | allocated by the measuring thread: " + allocated + " B" : "");
    }
}
