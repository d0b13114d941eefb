package io.jhca.mlx5.cmd;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Finds the third-party headers the golden tests compile against and runs small C programs: the kernel's
 * {@code linux/mlx5/mlx5_ifc.h} and {@code device.h} (package linux-headers-amd64, which pulls in
 * linux-headers-&lt;abi&gt;-common) and rdma-core's {@code infiniband/mlx5dv.h} (libibverbs-dev) for the DEVX macros.
 * The kernel headers are used through a shim directory holding only a {@code linux/mlx5} link, so the kernel's own
 * {@code linux/types.h} never shadows the user-space one.
 */
final class NativeHeaders {

    private NativeHeaders() {
    }

    /** The newest {@code /usr/src/linux-headers-*}{@code /include/linux/mlx5} directory; fails naming the package. */
    static Path mlx5HeaderDir() {
        List<Path> found = new ArrayList<>();
        Path src = Paths.get("/usr/src");
        if (Files.isDirectory(src)) {
            try (DirectoryStream<Path> ds = Files.newDirectoryStream(src, "linux-headers-*")) {
                for (Path p : ds) {
                    Path dir = p.resolve("include/linux/mlx5");
                    if (Files.isRegularFile(dir.resolve("mlx5_ifc.h"))
                            && Files.isRegularFile(dir.resolve("device.h"))) {
                        found.add(dir);
                    }
                }
            } catch (IOException e) {
                fail("cannot list /usr/src: " + e);
            }
        }
        if (found.isEmpty()) {
            fail("no /usr/src/linux-headers-*/include/linux/mlx5/mlx5_ifc.h: install the Debian package"
                    + " linux-headers-amd64 (it depends on linux-headers-<abi>-common, which ships the mlx5 headers)");
        }
        found.sort(Comparator.comparing(Path::toString));
        return found.get(found.size() - 1);
    }

    static void requireMlx5dv() {
        if (!Files.isRegularFile(Paths.get("/usr/include/infiniband/mlx5dv.h"))) {
            fail("/usr/include/infiniband/mlx5dv.h missing: install the Debian package libibverbs-dev");
        }
    }

    /**
     * Builds the include shim in {@code dir}: {@code linux/mlx5 -> <kernel headers>/linux/mlx5}, the kernel
     * vocabulary shim {@code kshim.h} and an {@code rdma/ib_verbs.h} stand-in (test resources under cmd/).
     */
    static Path shim(Path dir) throws IOException {
        Path shim = dir.resolve("shim");
        Files.createDirectories(shim.resolve("linux"));
        Files.createDirectories(shim.resolve("rdma"));
        Files.createSymbolicLink(shim.resolve("linux/mlx5"), mlx5HeaderDir());
        copyResource("/cmd/kshim.h", shim.resolve("kshim.h"));
        copyResource("/cmd/rdma/ib_verbs.h", shim.resolve("rdma/ib_verbs.h"));
        return shim;
    }

    private static void copyResource(String name, Path to) throws IOException {
        try (InputStream in = NativeHeaders.class.getResourceAsStream(name)) {
            if (in == null) {
                fail("test resource " + name + " missing");
            }
            Files.copy(in, to);
        }
    }

    /** Compiles {@code source} with gcc against the shim and runs it; returns stdout lines. */
    static List<String> compileAndRun(Path dir, String name, String source) throws IOException, InterruptedException {
        Path shim = shim(dir);
        Path c = dir.resolve(name + ".c");
        Path exe = dir.resolve(name);
        Files.writeString(c, source, StandardCharsets.UTF_8);
        run(dir, List.of(gcc(), "-std=gnu11", "-O0", "-Wall", "-Werror", "-I", shim.toString(),
                "-o", exe.toString(), c.toString()), "gcc " + name + ".c");
        return run(dir, List.of(exe.toString()), name);
    }

    private static String gcc() {
        for (String d : System.getenv().getOrDefault("PATH", "/usr/bin").split(":")) {
            if (Files.isExecutable(Paths.get(d, "gcc"))) {
                return Paths.get(d, "gcc").toString();
            }
        }
        fail("gcc not found on PATH: install the Debian package gcc");
        return null;
    }

    private static List<String> run(Path dir, List<String> cmd, String what) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true);
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(what + " did not finish");
        }
        String text = new String(out, StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            fail(what + " failed (exit " + p.exitValue() + "):\n" + text);
        }
        return List.of(text.split("\n"));
    }
}
