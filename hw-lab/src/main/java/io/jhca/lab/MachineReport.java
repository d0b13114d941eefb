package io.jhca.lab;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * The machine a run measured on, named as the bench scripts name theirs: CPUs, CPU model, whether it runs under a
 * hypervisor, the kernel, and what a null system call costs there. A software device's latency against its UDP floor
 * and against a C implementation depends on the last most of all: the same code read 1.25-1.29x the C on a host whose
 * system call took about 0.1 us and 1.5-1.6x on one where it took 0.25 us (tests/benchmarks/HISTORY.md, rounds 35-37),
 * so results from two machines are compared knowing it. The system call is {@code getppid} through jnr-ffi, as
 * lmbench's null call, timed after the run, never inside a measured window.
 */
final class MachineReport {
    /** Calls per timed block, and blocks (the median block is reported: a preempted block is an outlier). */
    private static final int CALLS = 2000;
    private static final int BLOCKS = 9;

    /** What was found: CPU count, CPU model, hypervisor flag, kernel, null system call in ns (-1: not measured). */
    record Machine(int cpus, String cpu, boolean hypervisor, String kernel, long syscallNanos) {

        /** " Machine: 2 CPUs, AMD EPYC, under a hypervisor, Linux 6.18.44 (amd64) | a null system call (getppid): 231 ns". */
        String line() {
            return " Machine: " + cpus + " CPUs, " + cpu + (hypervisor ? ", under a hypervisor" : "") + ", " + kernel
                    + " | a null system call (getppid): " + (syscallNanos < 0 ? "not measured" : syscallNanos + " ns");
        }
    }

    private static volatile Machine machine;

    private MachineReport() {
    }

    /** This machine, looked at and timed once per JVM. */
    static Machine get() {
        Machine m = machine;
        if (m == null) {
            String cpuinfo = "";
            try {
                cpuinfo = Files.readString(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8);
            } catch (IOException | RuntimeException e) {
                // not Linux: the model stays the JVM's architecture
            }
            m = new Machine(Runtime.getRuntime().availableProcessors(), cpuModel(cpuinfo), underHypervisor(cpuinfo),
                    System.getProperty("os.name") + " " + System.getProperty("os.version") + " ("
                            + System.getProperty("os.arch") + ")", syscallNanos());
            machine = m;
        }
        return m;
    }

    /** The first "model name" of /proc/cpuinfo (x86), else its first "Hardware"/"CPU part" line, else the architecture. */
    static String cpuModel(String cpuinfo) {
        for (String key : new String[] {"model name", "Hardware", "CPU part"}) {
            String v = value(cpuinfo, key);
            if (v != null) {
                return v;
            }
        }
        return System.getProperty("os.arch");
    }

    /** True if /proc/cpuinfo's flags carry "hypervisor" (CPUID leaf 1 ECX bit 31, which a hypervisor sets). */
    static boolean underHypervisor(String cpuinfo) {
        String flags = value(cpuinfo, "flags");
        return flags != null && Arrays.asList(flags.split("\\s+")).contains("hypervisor");
    }

    /** The first non-empty value of {@code key} in /proc/cpuinfo's "key : value" lines, or null. */
    private static String value(String cpuinfo, String key) {
        for (String line : cpuinfo.split("\n")) {
            int colon = line.indexOf(':');
            if (colon > 0 && line.substring(0, colon).trim().equals(key)) {
                String v = line.substring(colon + 1).trim();
                if (!v.isEmpty()) {
                    return v;
                }
            }
        }
        return null;
    }

    /** The median of {@value #BLOCKS} blocks of {@value #CALLS} calls after as many unmeasured, in ns a call; -1 if libc cannot be bound. */
    private static long syscallNanos() {
        Libc.Calls c;
        try {
            c = Libc.get();
        } catch (RuntimeException | LinkageError e) {
            return -1;
        }
        for (int i = 0; i < CALLS; i++) {
            c.getppid();   // a native call: the JIT cannot drop it, so its result needs no sink
        }
        long[] block = new long[BLOCKS];
        for (int b = 0; b < BLOCKS; b++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < CALLS; i++) {
                c.getppid();
            }
            block[b] = (System.nanoTime() - t0) / CALLS;
        }
        Arrays.sort(block);
        return block[BLOCKS / 2];
    }
}
