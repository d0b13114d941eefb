package io.jhca.tests.twojvm;

import static io.jhca.tests.twojvm.Shell.isRoot;
import static io.jhca.tests.twojvm.Shell.must;
import static io.jhca.tests.twojvm.Shell.run;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.BufferedReader;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.lab.HwLab;

/**
 * A held ACK and the request that releases it leave a loopback device as one UDP GSO datagram, the ACK second, its
 * ICRC computed with IPv4 ID 1: what the kernel gives the second segment when it splits the datagram. The kernel is
 * the oracle here. In a namespace of its own whose lo has UDP segmentation switched off (ethtool), the kernel splits
 * every such datagram before lo, where tshark captures the segments with their real IP headers; scapy then recomputes
 * every packet's ICRC from them. A write-lat ping-pong of the default loopback devices runs in a child JVM there, with
 * the longest ACK hold so that every ACK but the last waits for the answer: all ICRCs must match, and a quarter of the
 * packets (the split ACKs) must carry ID 1. The same for the bursts of a write-bw run (a message's packets, up to
 * three 4 KiB ones a GSO datagram): their segments carry IDs 1 and 2. Needs root, iproute2, ethtool, tshark and
 * scapy (the test command installs them); skipped without root.
 */
class CoalescedSegmentsTest {
    private final String ns = "jhca-g" + ProcessHandle.current().pid() % 100000;
    private boolean created;

    @BeforeEach
    void createNamespace() throws Exception {
        assumeTrue(isRoot(), "CoalescedSegmentsTest skipped: creating network namespaces needs root");
        assertEquals(0, run("ethtool", "--version"), "ethtool not found: install the 'ethtool' package");
        assertEquals(0, run("tshark", "--version"), "tshark not found: install the 'tshark' package");
        created = true;
        must("ip", "netns", "add", ns);
        must("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
        must("ip", "netns", "exec", ns, "ethtool", "-K", "lo", "tx-udp-segmentation", "off");
    }

    @AfterEach
    void deleteNamespace() throws Exception {
        if (created) {
            run("ip", "netns", "del", ns);
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES) // safety net only
    void theSplitAckCarriesIpv4IdOneAndItsIcrcMatches(@TempDir Path dir) throws Exception {
        // the longest hold: under the capture a round trip takes far longer than the default 4 us, and an ACK
        // released by time leaves alone; held this long, every ACK but the last leaves with an answer
        int[] ids = captureAndCheck(dir, List.of("-Djhca.rxe.ackhold=1000000"),
                List.of("perf", "write-lat", "-n", "300", "--warmup", "300", "--no-udp-baseline"));
        System.out.println("CoalescedSegmentsTest: " + ids[3] + " packets captured, " + ids[1] + " with IPv4 ID 1");
        assertTrue(ids[3] >= 600, "packets captured: " + ids[3]);
        assertTrue(ids[1] >= 600, "second segments (IPv4 ID 1) among " + ids[3] + " packets: " + ids[1]);
    }

    /**
     * The packets of a 64 KiB RDMA WRITE leave in bursts of up to three 4 KiB packets (a shorter one ends a burst):
     * split by the kernel, the second and third segments carry IPv4 IDs 1 and 2, and every ICRC matches.
     */
    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES) // safety net only
    void burstSegmentsCarryIpv4IdsOneAndTwoAndTheirIcrcsMatch(@TempDir Path dir) throws Exception {
        int messages = 40;
        int[] ids = captureAndCheck(dir, List.of(),
                List.of("perf", "write-bw", "-n", Integer.toString(messages), "--warmup", "20", "--no-udp-baseline"));
        System.out.println("CoalescedSegmentsTest: " + ids[3] + " packets captured, " + ids[1] + " with IPv4 ID 1, "
                + ids[2] + " with ID 2");
        assertTrue(ids[3] >= 16 * messages, "packets captured: " + ids[3]);
        assertTrue(ids[1] >= messages, "second segments (IPv4 ID 1) among " + ids[3] + " packets: " + ids[1]);
        assertTrue(ids[2] >= messages, "third segments (IPv4 ID 2) among " + ids[3] + " packets: " + ids[2]);
    }

    /**
     * Runs hwlab with {@code args} in a child JVM in the namespace while tshark captures lo, then has scapy check every
     * packet's ICRC: all must match and carry DF. Returns how many carried IPv4 ID 0, 1 and 2, and how many there were.
     */
    private int[] captureAndCheck(Path dir, List<String> jvmOptions, List<String> args) throws Exception {
        Path pcap = dir.resolve("lo.pcap");
        Process tshark = new ProcessBuilder("ip", "netns", "exec", ns, "tshark", "-i", "lo", "-f", "udp dst port 4791",
                "-F", "pcap", "-w", pcap.toString()).redirectErrorStream(true).start();
        CountDownLatch capturing = new CountDownLatch(1);
        StringBuffer tsharkLog = new StringBuffer();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(tshark.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    tsharkLog.append(line).append('\n');
                    if (line.contains("Capturing on")) {
                        capturing.countDown();
                    }
                }
            } catch (java.io.IOException e) {
                // the process ended
            }
        });
        reader.setDaemon(true);
        reader.start();
        try {
            assertTrue(capturing.await(30, TimeUnit.SECONDS), "tshark did not start capturing:\n" + tsharkLog);
            // the child JVM takes a second or more to start: the capture is live long before its first packet, and
            // the checks need only a part of the run's packets
            Path log = dir.resolve("child.log");
            Process child = Shell.childJvm(ns, dir.resolve("no-links"), log, jvmOptions, HwLab.class, args);
            assertTrue(child.waitFor(120, TimeUnit.SECONDS), args + " in the namespace did not end");
            assertEquals(0, child.exitValue(), args + " in the namespace failed:\n" + Files.readString(log));
            Thread.sleep(500);   // the last packets reach the capture file
        } finally {
            tshark.destroy();   // SIGTERM: tshark flushes and closes the file
            tshark.waitFor(30, TimeUnit.SECONDS);
        }
        Path script = dir.resolve("icrc_check.py");
        try (InputStream in = CoalescedSegmentsTest.class.getResourceAsStream("/io/jhca/tests/wire/icrc_check.py")) {
            assertTrue(in != null, "icrc_check.py is on the test class path");
            Files.copy(in, script);
        }
        Process check = new ProcessBuilder("/usr/bin/python3", script.toString(), pcap.toString())
                .redirectErrorStream(true).start();
        String out = new String(check.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(check.waitFor(120, TimeUnit.SECONDS));
        assertEquals(0, check.exitValue(), "scapy ICRC check failed to run:\n" + out);
        int[] ids = new int[4];
        for (String line : out.split("\n")) {
            if (line.isEmpty() || !Character.isDigit(line.charAt(0))) {
                continue;
            }
            // "<frame> <ip.id> <df> <icrc on the wire> <icrc computed> ok|BAD", or "<frame> skip <why>"
            String[] f = line.trim().split("\\s+");
            assertEquals(6, f.length, "a RoCEv2 packet: " + line);
            assertEquals("ok", f[5], "scapy's ICRC of the packet as captured: " + line);
            assertEquals("1", f[2], "DF: " + line);
            int id = Integer.parseInt(f[1]);
            if (id < 3) {
                ids[id]++;
            }
            ids[3]++;
        }
        return ids;
    }
}
