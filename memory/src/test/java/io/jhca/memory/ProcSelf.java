package io.jhca.memory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** Test-side readers of /proc/self: the kernel's own account of our mappings, independent of the code under test. */
final class ProcSelf {

    private ProcSelf() {
    }

    /** VmLck from /proc/self/status, in kB. */
    static long vmLckKb() throws IOException {
        for (final String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmLck:")) {
                return Long.parseLong(line.substring("VmLck:".length()).trim().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("no VmLck line in /proc/self/status");
    }

    /** "start-end" as /proc/self/maps and smaps print it (lower-case hex, no 0x). */
    static String range(final long address, final long mappedLength) {
        return Long.toHexString(address) + "-" + Long.toHexString(address + mappedLength);
    }

    /** True when /proc/self/maps has a mapping that starts at {@code address}. */
    static boolean mapped(final long address) throws IOException {
        final String prefix = Long.toHexString(address) + "-";
        for (final String line : Files.readAllLines(Path.of("/proc/self/maps"))) {
            if (line.startsWith(prefix)) {
                return true;
            }
        }
        return false;
    }

    /** The /proc/self/smaps block (header line and fields) of the mapping starting at {@code address}. */
    static List<String> smaps(final long address) throws IOException {
        final String prefix = Long.toHexString(address) + "-";
        final List<String> block = new ArrayList<>();
        boolean in = false;
        for (final String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            final boolean header = line.matches("^[0-9a-f]+-[0-9a-f]+ .*");
            if (header) {
                if (in) {
                    break;
                }
                in = line.startsWith(prefix);
            }
            if (in) {
                block.add(line);
            }
        }
        if (block.isEmpty()) {
            throw new IllegalStateException("no smaps entry starts at 0x" + Long.toHexString(address));
        }
        return block;
    }

    /** The value of {@code key} in an smaps block ("VmFlags", "KernelPageSize"). */
    static String smapsField(final List<String> block, final String key) {
        for (final String line : block) {
            if (line.startsWith(key + ":")) {
                return line.substring(key.length() + 1).trim();
            }
        }
        throw new IllegalStateException("no " + key + " in smaps block " + block.get(0));
    }

    static boolean isRoot() {
        return uid() == 0;
    }

    private static long uid() {
        try {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith("Uid:")) {
                    return Long.parseLong(line.substring(4).trim().split("\\s+")[1]); // effective uid
                }
            }
        } catch (final IOException ignored) {
            // not root as far as we can tell
        }
        return -1;
    }

    static long meminfo(final String key) throws IOException {
        for (final String line : Files.readAllLines(Path.of("/proc/meminfo"))) {
            if (line.startsWith(key + ":")) {
                return Long.parseLong(line.substring(key.length() + 1).trim().split("\\s+")[0]);
            }
        }
        throw new IllegalStateException("no " + key + " in /proc/meminfo");
    }
}
