package io.jhca.mlx5.wqe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;

/**
 * The fence modes and WQE geometry that only the kernel's include/linux/mlx5/qp.h (Debian linux-headers)
 * names. That header cannot be compiled from user space without shims, so its enum lines are read as text.
 */
class KernelQpHeaderTest {

    private static final Pattern ENUM = Pattern.compile("^\\s*(MLX5_\\w+)\\s*=\\s*(\\d+|0x[0-9a-fA-F]+)\\s*(?:<<\\s*(\\d+))?\\s*,", Pattern.MULTILINE);
    private static final Pattern DEFINE = Pattern.compile("^#define\\s+(MLX5_\\w+)\\s+(\\d+|0x[0-9a-fA-F]+)\\s*$", Pattern.MULTILINE);

    @Test
    void fenceModesAndGeometryMatchKernelQpH() throws IOException {
        String text = Files.readString(qpH());
        Map<String, Long> k = new HashMap<>();
        for (Pattern p : new Pattern[] {ENUM, DEFINE}) {
            Matcher m = p.matcher(text);
            while (m.find()) {
                long v = Long.decode(m.group(2));
                if (p == ENUM && m.group(3) != null) {
                    v <<= Integer.parseInt(m.group(3));
                }
                k.put(m.group(1), v);
            }
        }
        assertEquals(k.get("MLX5_FENCE_MODE_NONE"), (long) FmCeSe.FENCE_NONE);
        assertEquals(k.get("MLX5_FENCE_MODE_INITIATOR_SMALL"), (long) FmCeSe.FENCE_INITIATOR_SMALL);
        assertEquals(k.get("MLX5_FENCE_MODE_FENCE"), (long) FmCeSe.FENCE_MODE_FENCE);
        assertEquals(k.get("MLX5_FENCE_MODE_STRONG_ORDERING"), (long) FmCeSe.FENCE_STRONG_ORDERING);
        assertEquals(k.get("MLX5_FENCE_MODE_SMALL_AND_FENCE"), (long) FmCeSe.FENCE);
        assertEquals(k.get("MLX5_WQE_CTRL_CQ_UPDATE"), (long) FmCeSe.CQ_UPDATE);
        assertEquals(k.get("MLX5_WQE_CTRL_CQ_UPDATE_AND_EQE"), (long) FmCeSe.CQ_UPDATE_AND_EQE);
        assertEquals(k.get("MLX5_WQE_CTRL_SOLICITED"), (long) FmCeSe.SOLICITED);
        assertEquals(k.get("MLX5_SEND_WQE_DS"), (long) SendWqeLayout.DS);
        assertEquals(k.get("MLX5_SEND_WQE_BB"), (long) SendWqeLayout.WQEBB);
        assertEquals(k.get("MLX5_SEND_WQE_MAX_WQEBBS"), (long) SendWqeLayout.MAX_WQEBBS);
        assertEquals(k.get("MLX5_WQE_CTRL_DS_MASK"), (long) SendWqeLayout.MAX_DS);
    }

    private static Path qpH() throws IOException {
        Path src = Path.of("/usr/src");
        if (Files.isDirectory(src)) {
            try (DirectoryStream<Path> dirs = Files.newDirectoryStream(src, "linux-headers-*-common")) {
                for (Path d : dirs) {
                    Path qp = d.resolve("include/linux/mlx5/qp.h");
                    if (Files.isRegularFile(qp)) {
                        return qp;
                    }
                }
            }
        }
        fail("kernel include/linux/mlx5/qp.h not found under /usr/src/linux-headers-*-common: "
            + "install the Debian package linux-headers-amd64 (it pulls linux-headers-<abi>-common)");
        throw new AssertionError();
    }
}
