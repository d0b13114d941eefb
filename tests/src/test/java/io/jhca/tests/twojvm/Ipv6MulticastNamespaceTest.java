package io.jhca.tests.twojvm;

import io.jhca.tests.harness.Seeds;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * UD multicast to an IPv6 group (not IPv4-mapped) between two rxe devices on a veth pair: two network namespaces this
 * test creates (names unique to the run) with fd78::1/64 and fd78::2/64, DAD off; in each a JVM adds rxe9 on its
 * end ({@code hwlab link add}). The receiver attaches two UD QPs to a random group in ff0e::/16 (global scope) or
 * ff12::/16 (link-local scope; seed printed), the sender SENDs to it from its IPv6 GID; both QPs get every message with the payload intact and a GRH
 * that is the datagram's IPv6 header (source the sender's address, destination the group). Then one QP detaches and
 * a second batch reaches only the other. Needs root and iproute2 (skipped with the reason otherwise); everything
 * created is deleted afterwards. {@code hwlab perf send-bw --mcg} runs across the same pair with an IPv6 group.
 *
 * <p>Why namespaces: a fresh namespace's lo has no IPv6 multicast route, and the default namespace's interfaces are
 * not the test's to use; a veth pair is a link with MLD like any LAN.
 */
class Ipv6MulticastNamespaceTest {
    private final String suffix = Long.toString(ProcessHandle.current().pid() % 100000);
    private final String nsA = "jhca-m6a-" + suffix;
    private final String nsB = "jhca-m6b-" + suffix;
    private final String ifA = "jm6a" + suffix;
    private final String ifB = "jm6b" + suffix;
    private VethPair net;
    @TempDir
    Path dir;

    @BeforeEach
    void createNamespaces() throws Exception {
        net = VethPair.create("Ipv6MulticastNamespaceTest", nsA, ifA, nsB, ifB);
        VethPair.up(nsA, ifA, "fd78::1/64");
        VethPair.up(nsB, ifB, "fd78::2/64");
        multicastRouted(nsA, ifA);
        multicastRouted(nsB, ifB);
    }

    /**
     * Waits until {@code dev} has IPv6's multicast route (ff00::/8 in the local table). Linux takes it away when
     * the veth's carrier comes up and adds it back from its address-configuration work a moment later (about
     * 100 ms here, seconds on a loaded machine); a datagram to a group that arrives in between is dropped as
     * Ip6InNoRoutes, which is how this test once lost every message of its first group.
     */
    private static void multicastRouted(String ns, String dev) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (!Shell.output("ip", "-n", ns, "-6", "route", "show", "table", "local", "dev", dev).contains("ff00::/8")) {
            assertTrue(System.nanoTime() - end < 0, "no IPv6 multicast route on " + dev + " in " + ns + " after 20 s");
            Thread.sleep(20);
        }
    }

    @AfterEach
    void deleteNamespaces() throws Exception {
        if (net != null) {
            net.close();
        }
    }

    /**
     * ff0e: global scope; ff12: a transient group of link-local scope, whose group socket must be bound with the
     * interface as scope id (Linux refuses a link-local bind without one).
     */
    @ParameterizedTest
    @ValueSource(strings = {"ff0e", "ff12"})
    @Timeout(value = 120, unit = TimeUnit.SECONDS) // safety net only
    void ipv6GroupReachesTheOtherNamespaceAndDetachStopsIt(String prefix) throws Exception {
        Random r = new Random(Seeds.of("jhca.test.mcast6.seed", "IPv6 multicast group " + prefix + "::"));
        String mgid = String.format("%s::%x:%x", prefix, 1 + r.nextInt(0xfffe), 1 + r.nextInt(0xfffe));
        Process b = side(nsB, dir.resolve("b-links"), dir.resolve("b.log"), "recv", ifB, mgid, "fd78::1", dir);
        Process a = side(nsA, dir.resolve("a-links"), dir.resolve("a.log"), "send", ifA, mgid, "fd78::1", dir);
        TwoSides end = TwoSides.await(dir, b, 100, a, 10);   // the receiver ends the exchange
        String logA = end.logA();
        String logB = end.logB();
        String both = "group " + mgid + "\n" + end.labelled("sender", "receiver");
        assertTrue(end.done(), "the sides did not finish\n" + both);
        assertEquals(0, b.exitValue(), both);
        assertEquals(0, a.exitValue(), both);
        assertTrue(logA.contains("] fd78::1\n") && logB.contains("] fd78::2\n"), "each side sends from its IPv6 GID\n" + both);
        assertTrue(logB.contains("OK: both QPs got sequence 0..4 with the GRH's source fd78::1 and destination " + mgid),
                both);
        assertTrue(logB.contains("OK: after QP B detached, QP A got sequence 100..104 and QP B nothing"), both);
        assertTrue(logA.contains("DONE send") && logB.contains("DONE recv"), both);
    }

    /**
     * hwlab perf send-bw --mcg with an IPv6 group (perftest's multicast mode): the server's QP attached to ff0e::,
     * the client sending from its IPv6 GID; the server's report counts all 200 receive completions.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS) // safety net only
    void perfSendBwMcgOverAnIpv6Group() throws Exception {
        Random r = new Random(Seeds.of("jhca.test.mcast6.seed", "IPv6 group of perf send-bw --mcg"));
        String mgid = String.format("ff0e::%x:%x", 1 + r.nextInt(0xfffe), 1 + r.nextInt(0xfffe));
        Process b = side(nsB, dir.resolve("b-links"), dir.resolve("b.log"), "perf-server", ifB, mgid, "fd78::1", dir);
        Process a = side(nsA, dir.resolve("a-links"), dir.resolve("a.log"), "perf-client", ifA, mgid, "fd78::2", dir);
        TwoSides end = TwoSides.await(dir, a, 100, b, 10);
        String logA = end.logA();
        String logB = end.logB();
        String both = "group " + mgid + "\n" + end.labelled("client", "server");
        assertTrue(end.done(), "the sides did not finish\n" + both);
        assertEquals(0, a.exitValue(), both);
        assertEquals(0, b.exitValue(), both);
        // perftest prints the group's bytes in decimal on the server's local and the client's remote MGID line
        StringBuilder line = new StringBuilder(" MGID:");
        byte[] g = java.net.InetAddress.getByName(mgid).getAddress();
        for (int i = 0; i < 16; i++) {
            line.append(i == 0 ? " " : ":").append(String.format("%02d", g[i] & 0xFF));
        }
        for (String log : new String[] {logA, logB}) {
            assertTrue(log.contains(" MultiCast runs on UD!\n") && log.contains(line + "\n"), both);
            assertTrue(java.util.regex.Pattern.compile("(?m)^ 512 +200 ").matcher(log).find(), "a row of 200 x 512 B\n"
                    + both);
        }
        assertTrue(logB.contains(" local address: LID 0000 QPN 0xffffff "), both);
    }

    /** {@link Ipv6McastSide} in a child JVM in namespace {@code ns} with its own link file; output to {@code log}. */
    private static Process side(String ns, Path links, Path log, String role, String iface, String mgid, String source,
            Path dir) throws IOException {
        return Shell.childJvm(ns, links, log, Ipv6McastSide.class, List.of(role, iface, mgid, source, dir.toString()));
    }



}
