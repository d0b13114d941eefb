package io.jhca.tests.twojvm;

import io.jhca.lab.HwLab;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * rxe devices on real interfaces, set up as a user on a LAN would: two network namespaces this test creates
 * (jhca-link-a and jhca-link-b) joined by a veth pair with 10.77.0.1/24 and fd77::1/64 on one side, 10.77.0.2/24
 * and fd77::2/64 on the other; in each, {@code hwlab link add rxe9 netdev IFACE} (a link file of its own), then
 * {@code hwlab rc-pingpong} between the two JVMs over IPv4 ({@code -g 1}) and over IPv6 ({@code -g 2}), which
 * only works when each side sends from the address its GID names and receives on every address. The GID table
 * {@code hwlab devinfo -v} prints and a refused second {@code link add} are checked too. Needs root and iproute2;
 * skipped with the reason otherwise. Everything it creates is deleted afterwards.
 */
class LinkNamespaceTest {
    private static final String NS_A = "jhca-link-a";
    private static final String NS_B = "jhca-link-b";
    private static final String IF_A = "jla";
    private static final String IF_B = "jlb";
    private VethPair net;

    @BeforeEach
    void createNamespaces() throws Exception {
        net = VethPair.create("LinkNamespaceTest", NS_A, IF_A, NS_B, IF_B);
        VethPair.up(NS_A, IF_A, "10.77.0.1/24", "fd77::1/64");
        VethPair.up(NS_B, IF_B, "10.77.0.2/24", "fd77::2/64");
    }

    @AfterEach
    void deleteNamespaces() throws Exception {
        if (net != null) {
            net.close();
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS) // safety net only
    void linkAddOnEachSideThenPingpongOverIpv4AndIpv6(@TempDir Path dir) throws Exception {
        Path linksA = dir.resolve("a-links");
        Path linksB = dir.resolve("b-links");
        Path v4Ready = dir.resolve("v4-listening");
        Path v6Ready = dir.resolve("v6-listening");
        List<String> pp = List.of("rc-pingpong", "-d", "rxe9", "-n", "20", "-s", "1024");
        // one JVM per side runs every step; the client steps wait for the server to listen
        Process b = HwLabSteps.start(NS_B, linksB, dir.resolve("b.log"), List.of(
                List.of("link", "add", "rxe9", "type", "rxe", "netdev", IF_B),
                concat(List.of("flag-on-listen", v4Ready.toString()), pp, List.of("-g", "1")),
                concat(List.of("flag-on-listen", v6Ready.toString()), pp, List.of("-g", "2"))));
        Process a = HwLabSteps.start(NS_A, linksA, dir.resolve("a.log"), List.of(
                List.of("link", "add", "rxe9", "netdev", IF_A),
                List.of("link", "add", "rxe8", "netdev", IF_A),
                List.of("devinfo", "-d", "rxe9", "-v"),
                List.of("await", v4Ready.toString()),
                concat(pp, List.of("-g", "1", "10.77.0.2")),
                List.of("await", v6Ready.toString()),
                concat(pp, List.of("-g", "2", "fd77::2"))));
        TwoSides end = TwoSides.await(dir, a, 100, b, 10);
        String logA = end.logA();
        String logB = end.logB();
        String both = end.labelled("side A", "side B");
        assertTrue(end.done(), "the sides did not finish\n" + both);

        assertTrue(logA.contains("== exit 0: link add rxe9 netdev " + IF_A), both);
        assertTrue(logB.contains("== exit 0: link add rxe9 type rxe netdev " + IF_B), both);
        assertEquals("rxe9 netdev " + IF_A, Files.readAllLines(linksA).get(1), "the link file's device line");
        assertTrue(logA.contains("already has rxe device rxe9") && logA.contains("== exit " + HwLab.EXIT_FAILURE
                + ": link add rxe8 netdev " + IF_A), "a second device on the interface is refused\n" + both);
        assertTrue(logA.contains("== exit 0: devinfo -d rxe9 -v"), both);
        for (String line : new String[] {"GID[  0]:\t\tfe80::", "GID[  1]:\t\t::ffff:10.77.0.1, RoCE v2",
                "GID[  2]:\t\tfd77::1, RoCE v2"}) {
            assertTrue(logA.contains(line), "devinfo -v lacks '" + line + "'\n" + both);
        }
        assertFalse(logA.contains("GID[  3]"), "the link-local address equal to the default GID is not repeated\n"
                + both);

        for (String[] run : new String[][] {{"1", "10.77.0.2", "::ffff:10.77.0.1"}, {"2", "fd77::2", "fd77::1"}}) {
            assertTrue(logA.contains("== exit 0: " + String.join(" ", pp) + " -g " + run[0] + " " + run[1]),
                    "client over GID " + run[0] + "\n" + both);
            assertTrue(logB.contains("== exit 0: " + String.join(" ", pp) + " -g " + run[0]),
                    "server over GID " + run[0] + "\n" + both);
            assertTrue(logA.contains("local address:  LID 0x0000, QPN 0x000011, PSN") && logA.contains("GID " + run[2]),
                    both);
        }
        assertEquals(4, HwLabSteps.count(logA, "40960 bytes in") + HwLabSteps.count(logB, "40960 bytes in"), both);
    }

    @SafeVarargs
    private static List<String> concat(List<String>... parts) {
        List<String> out = new ArrayList<>();
        for (List<String> p : parts) {
            out.addAll(p);
        }
        return out;
    }
}
