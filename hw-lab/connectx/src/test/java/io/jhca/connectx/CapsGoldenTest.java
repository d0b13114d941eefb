package io.jhca.connectx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.mlx5.cmd.Field;
import io.jhca.mlx5.cmd.Layout;

/**
 * The capability layouts only the model defines ({@link ModelCaps#ATOMIC_CAPS}, {@link ModelCaps#ROCE_CAP}) against
 * the kernel's mlx5_ifc.h: a C program prints each field's bit offset and width with mlx5dv.h's DEVX macros. The
 * kernel header is reached through a shim directory holding only a {@code linux/mlx5} link, so its own linux/types.h
 * never shadows the user-space one. Needs gcc, libibverbs-dev and linux-headers-amd64.
 */
class CapsGoldenTest {

    @Test
    void atomicAndRoceCapsMatchMlx5Ifc(@TempDir Path dir) throws Exception {
        if (!Files.isRegularFile(Paths.get("/usr/include/infiniband/mlx5dv.h"))) {
            fail("/usr/include/infiniband/mlx5dv.h missing: install the Debian package libibverbs-dev");
        }
        Path shim = dir.resolve("shim");
        Files.createDirectories(shim.resolve("linux"));
        Files.createSymbolicLink(shim.resolve("linux/mlx5"), mlx5Headers());
        Files.writeString(shim.resolve("kshim.h"), "#include <stdint.h>\n#include <string.h>\n#include <linux/types.h>\n"
                + "typedef uint8_t u8;\ntypedef uint16_t u16;\ntypedef uint32_t u32;\ntypedef uint64_t u64;\n"
                + "#define BIT(n) (1UL << (n))\n#define BIT_ULL(n) (1ULL << (n))\n");
        StringBuilder c = new StringBuilder("#include \"kshim.h\"\n#include <infiniband/mlx5dv.h>\n"
                + "#include <linux/mlx5/mlx5_ifc.h>\n#include <stdio.h>\nint main(void)\n{\n");
        for (Layout l : List.of(ModelCaps.ATOMIC_CAPS, ModelCaps.ROCE_CAP)) {
            c.append("\tprintf(\"S ").append(l.name()).append(" %zu\\n\", (size_t)DEVX_ST_SZ_BYTES(")
                    .append(l.name()).append("));\n");
            for (Field f : l.fields()) {
                c.append("\tprintf(\"F ").append(l.name()).append('.').append(f.name())
                        .append(" %zu %zu\\n\", (size_t)__devx_bit_off(").append(l.name()).append(", ")
                        .append(f.name()).append("), (size_t)__devx_bit_sz(").append(l.name()).append(", ")
                        .append(f.name()).append("));\n");
            }
        }
        c.append("\tprintf(\"K size_qp_8 %d\\n\", (int)MLX5_ATOMIC_CAPS_ATOMIC_SIZE_QP_8_BYTES);\n")
                .append("\treturn 0;\n}\n");
        Path src = dir.resolve("caps.c");
        Files.writeString(src, c.toString(), StandardCharsets.UTF_8);
        Path exe = dir.resolve("caps");
        run(dir, List.of("gcc", "-std=gnu11", "-Wall", "-Werror", "-I", shim.toString(), "-o", exe.toString(),
                src.toString()));
        Map<String, String> out = new HashMap<>();
        for (String line : run(dir, List.of(exe.toString()))) {
            String[] p = line.split(" ", 3);
            if (p.length == 3) {
                out.put(p[0] + " " + p[1], p[2]);
            }
        }
        for (Layout l : List.of(ModelCaps.ATOMIC_CAPS, ModelCaps.ROCE_CAP)) {
            assertEquals(String.valueOf(l.sizeBytes()), out.get("S " + l.name()), l.name());
            for (Field f : l.fields()) {
                String got = out.get("F " + l.name() + "." + f.name());
                assertNotNull(got, f.name());
                assertEquals(f.bitOffset() + " " + f.bitWidth(), got, l.name() + "." + f.name());
            }
        }
        assertEquals("8", out.get("K size_qp_8"), "the model reports 8-byte QP atomics as 0x8");
    }

    private static Path mlx5Headers() throws IOException {
        List<Path> found = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get("/usr/src"), "linux-headers-*")) {
            for (Path p : ds) {
                if (Files.isRegularFile(p.resolve("include/linux/mlx5/mlx5_ifc.h"))) {
                    found.add(p.resolve("include/linux/mlx5"));
                }
            }
        } catch (IOException e) {
            // reported below
        }
        if (found.isEmpty()) {
            fail("no /usr/src/linux-headers-*/include/linux/mlx5/mlx5_ifc.h: install the Debian package "
                    + "linux-headers-amd64");
        }
        found.sort(null);
        return found.get(found.size() - 1);
    }

    private static List<String> run(Path dir, List<String> cmd) throws IOException, InterruptedException {
        Process p;
        try {
            p = new ProcessBuilder(cmd).directory(dir.toFile()).redirectErrorStream(true).start();
        } catch (IOException e) {
            fail(cmd.get(0) + " cannot run (install the Debian package gcc): " + e.getMessage());
            return List.of();
        }
        String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            fail(String.join(" ", cmd) + " failed:\n" + text);
        }
        return List.of(text.split("\n"));
    }
}
