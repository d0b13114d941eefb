package io.jhca.tests.twojvm;

import static io.jhca.tests.twojvm.Shell.isRoot;
import static io.jhca.tests.twojvm.Shell.must;
import static io.jhca.tests.twojvm.Shell.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.lab.HwLab;

/**
 * The default loopback devices receive from a packet ring where the process has CAP_NET_RAW, and by their sockets
 * where it has not, with the same defaults and the same results: {@code hwlab perf write-lat} runs in a child JVM in
 * a namespace of its own, once as root and once with CAP_NET_RAW taken out of its bounding set (setpriv, as an
 * unprivileged user would run it), and says how its device received. Needs root (namespaces, setpriv); skipped
 * without.
 */
class PacketRingPrivilegeTest {
    private final String ns = "jhca-r" + ProcessHandle.current().pid() % 100000;
    private boolean created;

    @BeforeEach
    void createNamespace() throws Exception {
        assumeTrue(isRoot(), "PacketRingPrivilegeTest skipped: namespaces and setpriv need root");
        created = true;
        must("ip", "netns", "add", ns);
        must("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
    }

    @AfterEach
    void deleteNamespace() throws Exception {
        if (created) {
            run("ip", "netns", "del", ns);
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES) // safety net only
    void withoutCapNetRawTheDevicesReceiveByTheirSocketsAndTheRunIsTheSame(@TempDir Path dir) throws Exception {
        String privileged = writeLat(dir, "root.log", List.of());
        assertTrue(privileged.contains(" Device rxe1 receives by: packet ring"), privileged);
        String unprivileged = writeLat(dir, "no-net-raw.log",
                List.of("setpriv", "--bounding-set", "-net_raw", "--inh-caps", "-net_raw", "--"));
        assertTrue(unprivileged.contains(" Device rxe1 receives by: socket (no packet ring: socket(AF_PACKET) failed:"
                + " errno 1 (Operation not permitted): CAP_NET_RAW is needed)"), unprivileged);
    }

    /** A short default write-lat between the default devices; its output, after checking it printed a result. */
    private String writeLat(Path dir, String name, List<String> wrapper) throws Exception {
        Path log = dir.resolve(name);
        Process child = Shell.childJvm(ns, wrapper, dir.resolve("no-links"), log, List.of(), HwLab.class,
                List.of("perf", "write-lat", "-n", "200", "--warmup", "200", "--no-udp-baseline"));
        assertTrue(child.waitFor(120, TimeUnit.SECONDS), "write-lat did not end");
        String out = Files.readString(log);
        assertEquals(0, child.exitValue(), "write-lat failed:\n" + out);
        assertTrue(out.lines().anyMatch(l -> l.matches(" 2 +200 +[0-9.]+ +[0-9.]+ +[0-9.]+ .*")),
                "a result row for 200 iterations of 2 bytes:\n" + out);
        return out;
    }
}
