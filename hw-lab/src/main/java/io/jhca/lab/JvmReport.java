package io.jhca.lab;

import java.lang.management.CompilationMXBean;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;

/**
 * Which JVM and collector ran a measurement, and how many collections happened while it ran: a JVM result is
 * only comparable to a C one when no GC pause fell into the measured phase. Counts come from the
 * GarbageCollectorMXBeans, read before and after. Likewise the JIT: the time its compiler threads spent inside
 * the window (CompilationMXBean), which on a machine of few cores is taken from the measured threads, and
 * {@link #awaitJitIdle}, which lets the compiler finish what the warm-up queued before the window opens.
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
    private long jit0;
    private long jitMillis;
    private long jitWaitMillis = -1;

    /** How long the compiler must stay idle for {@link #awaitJitIdle} to return, and how often it is looked at. */
    static final long JIT_IDLE_MILLIS = 300;
    static final long JIT_POLL_MILLIS = 50;
    /** The longest {@link #awaitJitIdle} waits: far below the tools' default stall timeout (30 s). */
    static final long JIT_WAIT_MAX_MILLIS = 5000;
    private static final CompilationMXBean JIT = ManagementFactory.getCompilationMXBean() != null
            && ManagementFactory.getCompilationMXBean().isCompilationTimeMonitoringSupported()
            ? ManagementFactory.getCompilationMXBean() : null;

    private LossCounters losses;

    private JvmReport() {
    }

    /** Starts the first measured window, in the thread that runs the measured loop. */
    public static JvmReport start() {
        return start(null);
    }

    /** {@link #start()}, also counting {@code losses} (null: none) over the same windows. */
    static JvmReport start(LossCounters losses) {
        JvmReport r = new JvmReport();
        r.losses = losses;
        r.begin();
        return r;
    }

    LossCounters losses() {
        return losses;
    }

    /** Starts (another) measured window; windows add up. */
    public JvmReport begin() {
        if (losses != null) {
            losses.begin(); // first: reading device counters allocates, which is not the loop's
        }
        long[] r = read();
        cycles0 = r[0];
        millis0 = r[1];
        jit0 = jitTotalMillis();
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
        jitMillis += jitTotalMillis() - jit0;
        if (losses != null) {
            losses.stop();
        }
        return this;
    }

    /**
     * After a warm-up, before the measured window: waits until the JIT compiler has been idle for
     * {@value #JIT_IDLE_MILLIS} ms (its total compilation time unchanged), at most {@value #JIT_WAIT_MAX_MILLIS}
     * ms. The warm-up makes the data path hot, but the compilations it queues take the C2 thread seconds on a
     * small machine, and on two cores that thread takes its time from the measured ones (an in-process
     * {@code write-bw} after 5000 warm-up messages: 0.7-1.1 s of compiling inside its measured window). Nothing is
     * in flight while it waits (the loops call it when every warm-up message has completed). Returns the
     * milliseconds waited, also in the footer.
     */
    public long awaitJitIdle() {
        jitWaitMillis = waitForJitIdle();
        return jitWaitMillis;
    }

    /** {@link #awaitJitIdle} for a measurement without a report of its own (the UDP floors); the ms waited. */
    static long waitForJitIdle() {
        return waitForJitIdle(JIT_IDLE_MILLIS);
    }

    /** As {@link #waitForJitIdle()}, done once the compiler has been idle for {@code quietMillis}. */
    static long waitForJitIdle(long quietMillis) {
        if (JIT == null) {
            return 0;
        }
        long start = System.nanoTime();
        long last = jitTotalMillis();
        long quietSince = start;
        while (true) {
            long now = System.nanoTime();
            if ((now - quietSince) / 1_000_000 >= quietMillis || (now - start) / 1_000_000 >= JIT_WAIT_MAX_MILLIS) {
                break;
            }
            try {
                Thread.sleep(JIT_POLL_MILLIS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
            long t = jitTotalMillis();
            if (t != last) {
                last = t;
                quietSince = System.nanoTime();
            }
        }
        return (System.nanoTime() - start) / 1_000_000;
    }

    /** Time the JIT compiler threads spent compiling inside the windows, in ms (-1 if the JVM does not say). */
    public long jitMillis() {
        return JIT == null ? -1 : jitMillis;
    }

    /** What {@link #awaitJitIdle} waited, in ms, or -1 if it was not called. */
    public long jitWaitMillis() {
        return jitWaitMillis;
    }

    /** The JIT compiler threads' total compile time so far, in ms (0 if the JVM does not say). */
    static long jitTotalMillis() {
        return JIT == null ? 0 : JIT.getTotalCompilationTime();
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

    /**
     * The collectors' beans, looked up once: the lookup builds its list anew through the platform's MBean registry
     * each time (0.3-0.9 ms here), which a window's start at the edge of the measured loop must not cost.
     */
    private static final List<GarbageCollectorMXBean> COLLECTORS = ManagementFactory.getGarbageCollectorMXBeans();

    private static long[] read() {
        long c = 0;
        long t = 0;
        for (GarbageCollectorMXBean gc : COLLECTORS) {
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

    /**
     * " JVM: ... | GC: G1 | GC cycles during measurement: 0 (0 ms) | allocated by the measuring thread: 0 B | JIT
     * compiling during measurement: 12 ms (after 840 ms waiting for it to go idle after the warm-up)".
     */
    public String footer() {
        return " JVM: " + jvm() + " | GC: " + gc() + " | GC cycles during measurement: " + cycles + " (" + millis + " ms)"
                + (allocatedBytes() >= 0 ? " | allocated by the measuring thread: " + allocated + " B" : "")
                + (jitMillis() >= 0 ? " | JIT compiling during measurement: " + jitMillis + " ms" : "")
                + (jitWaitMillis >= 0 ? " (after " + jitWaitMillis + " ms waiting for it to go idle after the warm-up)" : "");
    }
}
