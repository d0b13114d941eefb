package io.jhca.memory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Reads the /proc facts that error messages and checks need. Control path only. */
final class ProcFiles {

    static final Path MEMINFO = Path.of("/proc/meminfo");
    static final Path SELF_LIMITS = Path.of("/proc/self/limits");
    static final Path SELF_STATUS = Path.of("/proc/self/status");

    private ProcFiles() {
    }

    /** The text after "key:" on the first line that starts with it, trimmed; null when absent or unreadable. */
    static String field(final Path file, final String key) {
        try {
            final List<String> lines = Files.readAllLines(file);
            for (final String line : lines) {
                if (line.startsWith(key + ":")) {
                    return line.substring(key.length() + 1).trim();
                }
            }
        } catch (final IOException | UncheckedIOException ignored) {
            // reported as "unknown" by the caller
        }
        return null;
    }

    /** The leading number of a field ("1024" of "HugePages_Free:  1024", "2048" of "2048 kB"), or -1. */
    static long number(final Path file, final String key) {
        final String value = field(file, key);
        if (value == null) {
            return -1;
        }
        final String digits = value.split("\\s+")[0];
        try {
            return Long.parseLong(digits, 10);
        } catch (final NumberFormatException e) {
            return -1;
        }
    }

    /**
     * The soft RLIMIT_MEMLOCK as /proc/self/limits shows it ("Max locked memory  8388608  8388608  bytes"):
     * bytes, "unlimited", or "unknown".
     */
    static String memlockSoftLimit() {
        try {
            for (final String line : Files.readAllLines(SELF_LIMITS)) {
                if (line.startsWith("Max locked memory")) {
                    final String[] columns = line.substring("Max locked memory".length()).trim().split("\\s+");
                    return columns[0].equals("unlimited") ? "unlimited" : columns[0] + " bytes";
                }
            }
        } catch (final IOException | RuntimeException ignored) {
            // fall through
        }
        return "unknown";
    }

    /** True when this process has CAP_SYS_ADMIN in its effective set (CapEff in /proc/self/status, hex). */
    static boolean hasCapSysAdmin() {
        final String capEff = field(SELF_STATUS, "CapEff");
        if (capEff == null) {
            return false;
        }
        try {
            return (Long.parseUnsignedLong(capEff, 16) & (1L << LinuxConstants.CAP_SYS_ADMIN)) != 0;
        } catch (final NumberFormatException e) {
            return false;
        }
    }
}
