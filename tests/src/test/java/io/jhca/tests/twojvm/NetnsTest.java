package io.jhca.tests.twojvm;

import io.jhca.rxe.RxeDeviceConfig;
import io.jhca.rxe.RxeProvider;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.jhca.tests.twojvm.Shell.isRoot;
import static io.jhca.tests.twojvm.Shell.must;
import static io.jhca.tests.twojvm.Shell.run;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * RoCEv2 between network namespaces: the child JVM runs inside a namespace this test creates, joined to this
 * one by a veth pair of its own (a /30 that exists nowhere else), and the same SEND/WRITE exchange as
 * {@link TwoJvmTest} runs across it over UDP 4791. Needs root and iproute2 (the test command installs it);
 * skipped with the reason otherwise. Everything it creates is deleted afterwards.
 */
class NetnsTest {
    private final String ns = "jhca-t" + ProcessHandle.current().pid() % 100000;
    private final String vethHere = "jv" + ProcessHandle.current().pid() % 100000 + "a";
    private final String vethThere = "jv" + ProcessHandle.current().pid() % 100000 + "b";
    private static final String HERE = "10.89.7.1";
    private static final String THERE = "10.89.7.2";
    private boolean created;

    @BeforeEach
    void createNamespace() throws Exception {
        assumeTrue(isRoot(), "NetnsTest skipped: creating network namespaces needs root");
        assumeTrue(run("ip", "-V") == 0, "NetnsTest skipped: iproute2 ('ip') is not installed");
        created = true;
        must("ip", "netns", "add", ns);
        must("ip", "link", "add", vethHere, "type", "veth", "peer", "name", vethThere);
        must("ip", "link", "set", vethThere, "netns", ns);
        must("ip", "addr", "add", HERE + "/30", "dev", vethHere);
        must("ip", "link", "set", vethHere, "up");
        must("ip", "netns", "exec", ns, "ip", "addr", "add", THERE + "/30", "dev", vethThere);
        must("ip", "netns", "exec", ns, "ip", "link", "set", vethThere, "up");
        must("ip", "netns", "exec", ns, "ip", "link", "set", "lo", "up");
    }

    @AfterEach
    void deleteNamespace() throws Exception {
        if (created) {
            run("ip", "netns", "del", ns);   // takes the veth pair with it
            run("ip", "link", "del", vethHere);
        }
    }

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES) // safety net only
    void sendAndWriteAcrossNetworkNamespaces(@TempDir Path dir) throws Exception {
        InetAddress here = InetAddress.getByName(HERE);
        TwoJvmTest.exchangeWithChild(dir,
                () -> RxeProvider.open(RxeDeviceConfig.builder("netns0").address(here).build()),
                here, List.of("ip", "netns", "exec", ns), "netns1", THERE);
    }



}
