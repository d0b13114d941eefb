package io.jhca.vfio;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Assumptions;

/**
 * Compiles a C program from src/test/resources/golden with gcc against the system headers and reads its
 * "NAME VALUE" lines. Skips (an assumption) only when gcc itself is missing; scripts/test installs it.
 */
final class GoldenGcc {

    private GoldenGcc() {
    }

    static Map<String, Long> run(final String name, final Path dir) throws IOException, InterruptedException {
        final Path source = dir.resolve(name + ".c");
        try (InputStream in = GoldenGcc.class.getResourceAsStream("/golden/" + name + ".c")) {
            if (in == null) {
                fail("missing test resource golden/" + name + ".c");
            }
            Files.copy(in, source);
        }
        final Path exe = dir.resolve(name);
        final Process gcc;
        try {
            gcc = new ProcessBuilder(List.of("gcc", "-std=gnu11", "-Wall", "-o", exe.toString(), source.toString()))
                .redirectErrorStream(true).start();
        } catch (final IOException e) {
            Assumptions.abort("gcc is not installed (" + e.getMessage() + "): install the Debian package gcc");
            throw new AssertionError(e);
        }
        final String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!gcc.waitFor(120, TimeUnit.SECONDS)) {
            gcc.destroyForcibly();
            fail("gcc timed out on " + name + ".c");
        }
        if (gcc.exitValue() != 0) {
            fail("gcc failed on " + name + ".c (linux/vfio.h comes with the Debian package linux-libc-dev):\n" + out);
        }
        final Process p = new ProcessBuilder(exe.toString()).redirectErrorStream(true).start();
        final String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            fail(name + " failed:\n" + text);
        }
        final Map<String, Long> values = new LinkedHashMap<>();
        for (final String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            final String[] f = line.trim().split(" ");
            values.put(f[0], Long.parseLong(f[1]));
        }
        return values;
    }
}
