package io.jhca.tests.twojvm;

import static io.jhca.tests.twojvm.Shell.must;
import static io.jhca.tests.twojvm.Shell.output;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * A loopback device's packet ring takes only what arrives on lo. Its packet socket sees every interface's frames before
 * the IP stack does, and the IP stack would drop a datagram to 127.0.0.1 that came in on another interface (a martian);
 * so the ring's filter (and its check of each frame) must drop it too, or anyone on the LAN could hand a loopback device
 * packets the kernel never would. A device on 127.0.0.1 in one namespace ({@link RingInjectionProbe}); from the other
 * end of a veth pair scapy sends it RoCE datagrams addressed to 127.0.0.1:4791 at its interface's MAC: the interface
 * counts them, the device receives none. The same datagrams sent on its namespace's lo, the control, it receives.
 * Needs root, iproute2 and scapy (the test command installs them); skipped without root.
 */
class RingInjectionTest {

    private static final int FRAMES = 10;
    /** A BTH (RC SEND_ONLY, P_Key 0xFFFF, QPN 0x11, PSN 0) and four bytes for an ICRC: the device counts, then drops. */
    private static final String PAYLOAD = "bytes.fromhex('0400ffff00000011000000000badc0de')";

    @Test
    @Timeout(value = 2, unit = TimeUnit.MINUTES) // safety net only
    void framesToLoopbackFromAnotherInterfaceNeverReachTheRing(@TempDir Path dir) throws Exception {
        long pid = ProcessHandle.current().pid() % 100000;
        try (VethPair p = VethPair.create("RingInjectionTest", "jhca-ia" + pid, "jiA", "jhca-ib" + pid, "jiB")) {
            VethPair.up(p.nsA, p.ifA, "10.79.0.1/24");
            VethPair.up(p.nsB, p.ifB, "10.79.0.2/24");
            assumeTrue(Shell.run("ip", "netns", "exec", p.nsB, "/usr/bin/python3", "-c", "import scapy.all") == 0,
                    "RingInjectionTest skipped: scapy is not installed");
            Path log = dir.resolve("probe.log");
            Process probe = Shell.childJvm(p.nsA, dir.resolve("no-links"), log, RingInjectionProbe.class,
                    List.of(dir.toString()));
            try {
                awaitFile(dir.resolve("ready"), probe, log);
                String how = Files.readString(log);
                assertTrue(how.contains("RECEIVES BY packet ring"), "the device should receive from its ring:\n" + how);
                long before = rxPackets(p.nsA, p.ifA);
                Matcher mac = Pattern.compile("link/ether (\\S+)").matcher(output("ip", "-n", p.nsA, "link", "show",
                        p.ifA));
                assertTrue(mac.find(), "the veth end's MAC");
                inject(p.nsB, p.ifB, "Ether(dst='" + mac.group(1) + "')/IP(src='10.79.0.2', dst='127.0.0.1')");
                Thread.sleep(300);
                long fromVeth = count(dir, 1, probe, log);
                assertTrue(rxPackets(p.nsA, p.ifA) - before >= FRAMES, "the frames reached the device's namespace");
                inject(p.nsA, "lo", "Ether()/IP(src='127.0.0.2', dst='127.0.0.1')");
                Thread.sleep(300);
                long fromLo = count(dir, 2, probe, log);
                Files.createFile(dir.resolve("end"));
                assertTrue(probe.waitFor(30, TimeUnit.SECONDS), "the probe did not end");
                assertEquals(0, fromVeth, "datagrams the device received from another interface:\n"
                        + Files.readString(log));
                assertEquals(FRAMES, fromLo, "the control: datagrams the device received on lo");
            } finally {
                probe.destroyForcibly();
            }
        }
    }

    /** scapy sends {@link #FRAMES} RoCE datagrams with the headers {@code layers} to UDP 4791 on {@code iface}. */
    private static void inject(String ns, String iface, String layers) throws Exception {
        must("ip", "netns", "exec", ns, "/usr/bin/python3", "-c", "from scapy.all import *\n"
                + "sendp(" + layers + "/UDP(sport=4791, dport=4791)/Raw(" + PAYLOAD + "), iface='" + iface
                + "', count=" + FRAMES + ", verbose=False)");
    }

    private static long rxPackets(String ns, String iface) throws Exception {
        return Long.parseLong(output("ip", "netns", "exec", ns, "cat",
                "/sys/class/net/" + iface + "/statistics/rx_packets").trim());
    }

    /** Asks the probe for its count of received datagrams ({@code COUNT n} in its log). */
    private static long count(Path dir, int n, Process probe, Path log) throws Exception {
        Files.createFile(dir.resolve("count-" + n));
        awaitFile(dir.resolve("counted-" + n), probe, log);
        Matcher m = Pattern.compile("COUNT " + n + " (\\d+)").matcher(Files.readString(log));
        assertTrue(m.find(), Files.readString(log));
        return Long.parseLong(m.group(1));
    }

    private static void awaitFile(Path f, Process probe, Path log) throws Exception {
        long end = System.nanoTime() + 30_000_000_000L;
        while (!Files.exists(f)) {
            assertTrue(probe.isAlive() && System.nanoTime() < end, "waited for " + f.getFileName() + ":\n"
                    + Files.readString(log));
            Thread.sleep(20);
        }
    }
}
