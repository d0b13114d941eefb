package io.jhca.tests.twojvm;

import static io.jhca.tests.twojvm.Shell.isRoot;
import static io.jhca.tests.twojvm.Shell.must;
import static io.jhca.tests.twojvm.Shell.run;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Two network namespaces a test creates, joined by a veth pair: a LAN of its own, with MLD like any other. Needs
 * root and iproute2 (the test is skipped with the reason otherwise). Namespaces of the same names left by a killed
 * run are removed first; {@link #close} deletes both, which takes the pair with them.
 */
final class VethPair implements AutoCloseable {
    final String nsA;
    final String ifA;
    final String nsB;
    final String ifB;

    private VethPair(String nsA, String ifA, String nsB, String ifB) {
        this.nsA = nsA;
        this.ifA = ifA;
        this.nsB = nsB;
        this.ifB = ifB;
    }

    /** Creates namespaces {@code nsA} and {@code nsB} with the veth ends {@code ifA} and {@code ifB}, still down. */
    static VethPair create(String test, String nsA, String ifA, String nsB, String ifB) throws Exception {
        assumeTrue(isRoot(), test + " skipped: creating network namespaces needs root");
        assumeTrue(run("ip", "-V") == 0, test + " skipped: iproute2 ('ip') is not installed");
        VethPair p = new VethPair(nsA, ifA, nsB, ifB);
        p.close(); // left over by a killed run
        try {
            must("ip", "netns", "add", nsA);
            must("ip", "netns", "add", nsB);
            must("ip", "-n", nsA, "link", "add", ifA, "type", "veth", "peer", "name", ifB, "netns", nsB);
        } catch (Exception | Error e) {
            p.close();
            throw e;
        }
        return p;
    }

    /**
     * Brings up {@code dev} in {@code ns} with {@code cidrs} (in order) and the namespace's lo. No duplicate address
     * detection: a tentative IPv6 address cannot be bound yet.
     */
    static void up(String ns, String dev, String... cidrs) throws Exception {
        must("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv6.conf.all.accept_dad=0",
                "net.ipv6.conf." + dev + ".accept_dad=0");
        must("ip", "-n", ns, "link", "set", "lo", "up");
        for (String cidr : cidrs) {
            if (cidr.contains(":")) {
                must("ip", "-n", ns, "addr", "add", cidr, "dev", dev, "nodad");
            } else {
                must("ip", "-n", ns, "addr", "add", cidr, "dev", dev);
            }
        }
        must("ip", "-n", ns, "link", "set", dev, "up");
    }

    @Override
    public void close() throws Exception {
        run("ip", "netns", "del", nsA);
        run("ip", "netns", "del", nsB);
    }
}
