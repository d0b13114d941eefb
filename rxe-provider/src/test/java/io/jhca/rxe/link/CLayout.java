package io.jhca.rxe.link;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * The golden tests' C side: a program that prints {@code NAME value} lines, compiled with gcc against the system's
 * headers and run, its values read back by name.
 */
final class CLayout {

    private CLayout() {
    }

    /** Compiles {@code program} in {@code dir}, runs it, and returns what it printed, by name. */
    static Map<String, Long> compileAndRun(final Path dir, final String program) throws Exception {
        final Path src = dir.resolve("layout.c");
        final Path exe = dir.resolve("layout");
        Files.writeString(src, program);
        run(dir, List.of("gcc", "-o", exe.toString(), src.toString()));
        final Map<String, Long> values = new LinkedHashMap<>();
        for (final String line : run(dir, List.of(exe.toString())).lines().toList()) {
            final String[] parts = line.split(" ");
            values.put(parts[0], Long.parseLong(parts[1]));
        }
        return values;
    }

    /** Fails unless the C side printed {@code name} with the value {@code ours}. */
    static void same(final Map<String, Long> c, final String name, final long ours) {
        final Long theirs = c.get(name);
        assertTrue(theirs != null, name + " not printed: " + c);
        assertEquals(theirs.longValue(), ours, name + ": the C headers' value against ours");
    }

    /** Runs a command and returns its output; fails with it on a non-zero exit (gcc comes with scripts/test). */
    private static String run(final Path dir, final List<String> command) throws Exception {
        final Path out = dir.resolve("out.txt");
        final Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(command + " did not finish in 60 s");
        }
        final String text = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), command + ": " + text);
        return text;
    }
}
