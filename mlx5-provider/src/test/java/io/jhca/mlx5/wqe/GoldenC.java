package io.jhca.mlx5.wqe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import org.agrona.DirectBuffer;

/**
 * Builds and runs the golden-vector C programs of src/test/resources/golden against the system's
 * {@code <infiniband/mlx5dv.h>} (Debian package libibverbs-dev) with gcc. A missing tool or header fails
 * the test with the package to install; it never skips.
 */
public final class GoldenC {

    private static final String[] SOURCES_SHARED = {"golden_common.h"};

    private GoldenC() {
    }

    /** Whether gcc may use SSSE3 (to also build mlx5dv.h's x86 helpers). */
    public static boolean x86() {
        String arch = System.getProperty("os.arch", "");
        return arch.equals("amd64") || arch.equals("x86_64");
    }

    /** Copies {@code golden/<name>.c} (and the shared header) into {@code dir} and compiles it; returns the executable. */
    public static Path compile(String name, Path dir) throws IOException, InterruptedException {
        for (String shared : SOURCES_SHARED) {
            copyResource(shared, dir);
        }
        Path source = copyResource(name + ".c", dir);
        Path exe = dir.resolve(name);
        List<String> cmd = new ArrayList<>(List.of("gcc", "-std=gnu11", "-O1", "-Wall", "-o", exe.toString(), source.toString()));
        if (x86()) {
            cmd.add(2, "-mssse3");
        }
        Process gcc;
        try {
            gcc = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            fail("cannot run gcc (" + e.getMessage() + "): install the Debian package gcc to build the mlx5 golden vectors");
            throw new AssertionError(e);
        }
        String out = new String(gcc.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!gcc.waitFor(120, TimeUnit.SECONDS)) {
            gcc.destroyForcibly();
            fail("gcc timed out compiling " + name + ".c");
        }
        if (gcc.exitValue() != 0) {
            if (out.contains("mlx5dv.h") && out.toLowerCase(Locale.ROOT).contains("no such file")) {
                fail("<infiniband/mlx5dv.h> not found: install the Debian package libibverbs-dev (golden vectors need it)\n" + out);
            }
            fail("gcc failed on " + name + ".c:\n" + out);
        }
        return exe;
    }

    /** Runs {@code exe args...} and returns its stdout lines split on spaces. */
    public static List<String[]> run(Path exe, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(exe.toString());
        cmd.addAll(List.of(args));
        Path err = Files.createTempFile(exe.getParent(), "stderr", ".txt");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.US_ASCII);
        if (!p.waitFor(120, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(exe.getFileName() + " timed out");
        }
        if (p.exitValue() != 0) {
            fail(exe.getFileName() + " exited with " + p.exitValue() + ": " + Files.readString(err));
        }
        List<String[]> lines = new ArrayList<>();
        for (String line : out.split("\n")) {
            if (!line.isBlank()) {
                lines.add(line.trim().split(" "));
            }
        }
        return lines;
    }

    /** A hex token as an unsigned number. */
    /**
     * Checks Java's layout facts against the header's: the program's {@code size NAME BYTES} and {@code layout
     * STRUCT FIELD OFFSET SIZE} lines (printed with seed 1, count 0) must match {@code java}, whose keys are
     * "struct" (value {size}) and "struct.field" (value {offset, size}), and every Java fact must be checked.
     */
    public static void checkLayouts(Path exe, java.util.Map<String, int[]> java) throws IOException, InterruptedException {
        int seen = 0;
        for (String[] t : run(exe, "1", "0")) {
            if (t[0].equals("size")) {
                assertEquals(Integer.parseInt(t[2]), java.get(t[1])[0], "sizeof " + t[1]);
                seen++;
            } else if (t[0].equals("layout")) {
                int[] j = java.get(t[1] + "." + t[2]);
                assertEquals(Integer.parseInt(t[3]), j[0], "offsetof " + t[1] + "." + t[2]);
                assertEquals(Integer.parseInt(t[4]), j[1], "sizeof " + t[1] + "." + t[2]);
                seen++;
            }
        }
        assertEquals(java.size(), seen, "every Java layout fact checked against the header");
    }

    public static long num(String hex) {
        return Long.parseUnsignedLong(hex, 16);
    }

    /** A hex token as an int (low 32 bits). */
    public static int int32(String hex) {
        return (int) num(hex);
    }

    /** Bytes of a hex string ("-" = none). */
    public static byte[] bytes(String hex) {
        if (hex.equals("-")) {
            return new byte[0];
        }
        byte[] b = new byte[hex.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }

    /** The bytes [offset, offset+length) of a buffer as lower-case hex. */
    public static String hex(DirectBuffer buffer, int offset, int length) {
        StringBuilder sb = new StringBuilder(2 * length);
        for (int i = 0; i < length; i++) {
            sb.append(Character.forDigit((buffer.getByte(offset + i) >> 4) & 0xf, 16));
            sb.append(Character.forDigit(buffer.getByte(offset + i) & 0xf, 16));
        }
        return sb.toString();
    }

    private static Path copyResource(String file, Path dir) throws IOException {
        Path target = dir.resolve(file);
        try (InputStream in = GoldenC.class.getResourceAsStream("/golden/" + file)) {
            if (in == null) {
                throw new IOException("test resource golden/" + file + " missing");
            }
            Files.copy(in, target);
        }
        return target;
    }
}
