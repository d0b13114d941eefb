package io.jhca.memory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * mlock beyond RLIMIT_MEMLOCK, in a child JVM started under {@code ulimit -l 64}. Root bypasses the limit
 * through CAP_IPC_LOCK, so as root the child is started by capsh with that capability dropped.
 */
class LockLimitTest {

    @Test
    void lockBeyondTheLimitNamesTheLimitAndTheFix() throws Exception {
        final String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        final String shell = "ulimit -l 64 && exec \"$PROBE_JAVA\" --add-opens java.base/jdk.internal.misc=ALL-UNNAMED"
            + " io.jhca.memory.LockLimitProbe";
        final List<String> command = new ArrayList<>();
        if (ProcSelf.isRoot()) {
            final Path capsh = Stream.of("/usr/sbin/capsh", "/sbin/capsh").map(Path::of).filter(Files::isExecutable)
                .findFirst().orElseThrow(() -> new AssertionError(
                    "capsh is missing (install libcap2-bin): root needs it to drop CAP_IPC_LOCK for this test"));
            command.addAll(List.of(capsh.toString(), "--drop=cap_ipc_lock", "--", "-c", shell));
        } else {
            command.addAll(List.of("/bin/sh", "-c", shell));
        }
        final ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().put("PROBE_JAVA", java);
        builder.environment().put("CLASSPATH", System.getProperty("java.class.path"));
        final Process process = builder.start();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(60, TimeUnit.SECONDS), "probe hung");
        assertEquals(0, process.exitValue(), out);

        assertTrue(out.contains("LOCKED-FAILED mlock of 1048576 bytes failed: "), out);
        assertTrue(out.contains("ENOMEM") || out.contains("EPERM"), out);
        assertTrue(out.contains("RLIMIT_MEMLOCK, now 65536 bytes"), out);
        assertTrue(out.contains("`ulimit -l"), out);
        assertTrue(out.contains("UNLOCKED-ALLOCATED"), "lock(false) needs no locked-memory budget: " + out);
    }
}
