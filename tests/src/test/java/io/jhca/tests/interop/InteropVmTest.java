package io.jhca.tests.interop;

import java.io.IOException;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.rxe.wire.Icrc;
import io.jhca.rxe.wire.Ipv4IdMode;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * jhca against the real rdma-core tools and Linux Soft-RoCE, with jhca's defaults only (no ICRC property, no
 * --bind, no GID index): {@code scripts/interop-vm run} boots a Debian guest (rdma_rxe on its virtio NIC) and runs
 * (a) the guest's {@code ibv_rc_pingpong} server against {@code hwlab rc-pingpong} as client, (b) the reverse,
 * (c, e) every perftest test hwlab has (ib_write_lat, ib_send_lat, ib_read_lat, ib_atomic_lat, ib_write_bw,
 * ib_send_bw, ib_read_bw) in both roles, (p) perftest's rdma_cm mode (-R) in both roles, (d) the guest's ICRCs checked by an independent CRC, accepted by the
 * default ICRC mode and refused by strict. The guest's packets captured in (a) are then checked with jhca's own
 * ICRC code: they carry non-zero IPv4 IDs, which the full-header check accepts and the ID-recovering receive
 * check finds exactly.
 *
 * <p>Part of the default suite where the machine allows it: root (network namespace, tap) and a Linux host; QEMU
 * and the guest's Debian packages are installed by the script. About four minutes under TCG on 2 cores.
 * {@code -Djhca.interop=false} skips it.
 */
class InteropVmTest {

    private static final String GUEST_IP = "10.88.0.2";
    private static final String HOST_IP = "10.88.0.1";
    /** The script bounds each of its waits; this is the outer limit for boot + both scenarios. */
    private static final long RUN_LIMIT_MINUTES = 20;

    @TempDir
    static Path out;

    private static final String SKIP_REASON = skipReason();
    private static final boolean ENABLED = SKIP_REASON == null;

    private static String summary;
    private static String log;

    @BeforeAll
    static void runScenarios() throws Exception {
        if (!ENABLED) {
            System.out.println(SKIP_REASON);
            return;
        }
        Path script = repoRoot().resolve("scripts/interop-vm");
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString(), "run")
                .redirectErrorStream(true)
                .redirectOutput(out.resolve("interop-vm.log").toFile());
        pb.environment().put("INTEROP_VM_OUT", out.resolve("run").toString());
        // this JVM's class path holds hw-lab and everything it needs, as built by this Maven run
        pb.environment().put("INTEROP_VM_CLASSPATH",
                System.getProperty("surefire.test.class.path", System.getProperty("java.class.path")));
        Process p = pb.start();
        if (!p.waitFor(RUN_LIMIT_MINUTES, TimeUnit.MINUTES)) {
            p.destroy(); // SIGTERM: the script's trap stops the VM and deletes the namespace
            if (!p.waitFor(200, TimeUnit.SECONDS)) { // the trap runs once the current bounded step ends
                p.destroyForcibly();
            }
        }
        log = Files.readString(out.resolve("interop-vm.log"), StandardCharsets.UTF_8);
        System.out.println(log);
        Path s = out.resolve("run/summary.txt");
        summary = Files.exists(s) ? Files.readString(s, StandardCharsets.UTF_8) : "";
        if (summary.isEmpty()) {
            fail("scripts/interop-vm produced no summary (exit " + (p.isAlive() ? "none" : p.exitValue())
                    + "); its output:\n" + tail(log));
        }
    }

    /** Why this machine cannot run the VM (null if it can). */
    private static String skipReason() {
        if (!Boolean.parseBoolean(System.getProperty("jhca.interop", "true"))) {
            return "InteropVmTest skipped: -Djhca.interop=false";
        }
        if (!System.getProperty("os.name", "").toLowerCase(java.util.Locale.ROOT).contains("linux")) {
            return "InteropVmTest skipped: needs a Linux host (network namespace, tap, QEMU)";
        }
        if (!"root".equals(System.getProperty("user.name"))) {
            return "InteropVmTest skipped: needs root (network namespace and tap device); run the suite as root";
        }
        if (!Files.exists(Path.of("/dev/net/tun"))) {
            return "InteropVmTest skipped: no /dev/net/tun for the guest's tap device";
        }
        return null;
    }

    @BeforeEach
    void enabled() {
        assumeTrue(ENABLED, SKIP_REASON);
    }

    @Test
    void everyScenarioPassesWithDefaults() {
        for (String v : new String[] {"a:", "b:", "d1:", "d2:", "d4:"}) {
            assertTrue(summary.contains("PASS " + v), "scenario " + v + " failed:\n" + summary + "\n" + tail(log));
        }
        for (String t : new String[] {"write-lat", "send-lat", "read-lat", "atomic-lat", "write-bw", "send-bw",
                "read-bw"}) {
            String sc = t.equals("write-lat") || t.equals("send-lat") ? "c" : "e";
            for (String role : new String[] {"guest-server", "jhca-server"}) {
                String v = sc + "-" + t + "-" + role + ":";
                assertTrue(summary.contains("PASS " + v), v + " failed:\n" + summary + "\n" + tail(log));
            }
        }
        // s: shared receive queues (perftest --use-srq, ibv_srq_pingpong), both roles
        for (String v : new String[] {"s-send-lat-guest-server:", "s-send-lat-jhca-server:", "s-send-bw-guest-server:",
                "s-send-bw-jhca-server:", "s-srq-guest-server:", "s-srq-jhca-server:"}) {
            assertTrue(summary.contains("PASS " + v), v + " failed:\n" + summary + "\n" + tail(log));
        }
        for (String v : new String[] {"v-send-lat-guest-server:", "v-send-lat-jhca-server:", "v-send-bw-guest-server:",
                "v-send-bw-jhca-server:", "v-pp-guest-server:", "v-pp-jhca-server:"}) {
            assertTrue(summary.contains("PASS " + v), "event mode " + v + " failed:\n" + summary + "\n" + tail(log));
        }
        assertTrue(!summary.contains("FAIL"), "a scenario failed:\n" + summary);
    }

    @Test
    void rpingAndUcmatoseOverRdmaCmInBothRoles() {
        for (String v : new String[] {"r-guest-server:", "r-jhca-server:", "r-ucmatose-guest-server:",
                "r-ucmatose-jhca-server:"}) {
            assertTrue(summary.contains("PASS " + v), "scenario " + v + " failed:\n" + summary + "\n" + tail(log));
        }
    }

    /** p: perftest's rdma_cm mode (-R), the exchange and the test QPs connected by rdma_cm, both roles. */
    @Test
    void perftestRdmaCmInBothRoles() {
        for (String t : new String[] {"write-lat", "send-lat", "read-lat", "write-bw", "send-bw"}) {
            for (String role : new String[] {"guest-server", "jhca-server"}) {
                String v = "p-" + t + "-" + role + ":";
                assertTrue(summary.contains("PASS " + v), "perftest -R " + v + " failed:\n" + summary + "\n" + tail(log));
            }
        }
        for (String t : new String[] {"write-bw", "send-bw"}) {
            for (String role : new String[] {"guest-server", "jhca-server"}) {
                String v = "pq-" + t + "-" + role + ":";
                assertTrue(summary.contains("PASS " + v), "perftest -R -q 2 " + v + " failed:\n" + summary + "\n" + tail(log));
            }
        }
    }

    /**
     * m: UD multicast with the guest's rxe: a feed into hwlab mcast recv, and perftest's multicast mode (ib_send_bw
     * --mcg <-> hwlab perf send-bw --mcg) both ways, each counted as the receiving QP's completions.
     */
    @Test
    void multicastBothWays() {
        for (String v : new String[] {"m-guest-to-jhca:", "m-jhca-to-guest:", "m-perf-guest-to-jhca:"}) {
            assertTrue(summary.contains("PASS " + v), "multicast " + v + " failed:\n" + summary + "\n" + tail(log));
        }
    }

    @Test
    void guestIbvRcPingpongServerWithJhcaClient() {
        assertTrue(summary.contains("PASS a:"), "scenario a failed:\n" + summary + "\n" + tail(log));
    }

    @Test
    void jhcaServerWithGuestIbvRcPingpongClient() {
        assertTrue(summary.contains("PASS b:"), "scenario b failed:\n" + summary + "\n" + tail(log));
    }

    @Test
    void guestRxePacketsPassJhcaIcrcChecks() throws IOException {
        List<int[]> seen = new ArrayList<>();
        Icrc icrc = new Icrc();
        byte[] pcap = Files.readAllBytes(out.resolve("run/a.pcap"));
        UnsafeBuffer buf = new UnsafeBuffer(pcap);
        // classic pcap, written by tcpdump in host order (little-endian here): 24-byte file header, then per
        // packet a 16-byte record header (incl_len at +8) and the Ethernet frame
        assertEquals(0xA1B2C3D4, buf.getInt(0, ByteOrder.LITTLE_ENDIAN), "not a little-endian classic pcap");
        assertEquals(1, buf.getInt(20, ByteOrder.LITTLE_ENDIAN), "not an Ethernet capture");
        int guest = ipv4(GUEST_IP);
        int host = ipv4(HOST_IP);
        int nonZeroIds = 0;
        for (int rec = 24; rec + 16 <= pcap.length; ) {
            int incl = buf.getInt(rec + 8, ByteOrder.LITTLE_ENDIAN);
            int eth = rec + 16;
            rec = eth + incl;
            int ip = eth + 14;
            // IPv4 (ethertype 0x0800, big-endian), no options, UDP to 4791, from the guest
            if (incl < 14 + 20 + 8 + 12 + 4 || buf.getShort(eth + 12, ByteOrder.BIG_ENDIAN) != 0x0800
                    || buf.getByte(ip) != 0x45 || buf.getByte(ip + 9) != 17
                    || (buf.getShort(ip + 22, ByteOrder.BIG_ENDIAN) & 0xFFFF) != 4791
                    || buf.getInt(ip + 12, ByteOrder.BIG_ENDIAN) != guest) {
                continue;
            }
            int totalLength = buf.getShort(ip + 2, ByteOrder.BIG_ENDIAN) & 0xFFFF;
            int id = buf.getShort(ip + 4, ByteOrder.BIG_ENDIAN) & 0xFFFF;
            int flagsFragment = buf.getShort(ip + 6, ByteOrder.BIG_ENDIAN) & 0xFFFF;
            int sport = buf.getShort(ip + 20, ByteOrder.BIG_ENDIAN) & 0xFFFF;
            int payload = totalLength - 28;
            String what = "guest packet #" + seen.size() + " (IPv4 ID 0x" + Integer.toHexString(id) + ")";
            assertTrue(icrc.verifyIpPacket(buf, ip, totalLength), what + ": ICRC wrong with its real IP header");
            assertEquals(id, icrc.verifyIpv4(Ipv4IdMode.RECOVER_ID, guest, host, flagsFragment, sport, 4791, buf,
                    ip + 28, payload), what + ": recover mode did not find the IPv4 ID");
            if (id != 0) {
                nonZeroIds++;
                assertEquals(Icrc.NO_MATCH, icrc.verifyIpv4(Ipv4IdMode.STRICT_ID_ZERO, guest, host, flagsFragment,
                        sport, 4791, buf, ip + 28, payload), what + ": strict mode accepted a non-zero ID");
            }
            seen.add(new int[] {id});
        }
        assertTrue(seen.size() > 100, "too few RoCEv2 packets from the guest in a.pcap: " + seen.size());
        assertTrue(nonZeroIds > seen.size() / 2, "expected rxe's non-zero IPv4 IDs, got " + nonZeroIds + " of "
                + seen.size());
    }

    private static int ipv4(String dotted) {
        int v = 0;
        for (String part : dotted.split("\\.")) {
            v = (v << 8) | Integer.parseInt(part);
        }
        return v;
    }

    private static String tail(String s) {
        return s.length() <= 6000 ? s : "..." + s.substring(s.length() - 6000);
    }

    /** The repository root: the nearest directory upwards from the working directory holding the script. */
    private static Path repoRoot() {
        for (Path d = Path.of("").toAbsolutePath(); d != null; d = d.getParent()) {
            if (Files.isRegularFile(d.resolve("scripts/interop-vm"))) {
                return d;
            }
        }
        throw new IllegalStateException("scripts/interop-vm not found above " + Path.of("").toAbsolutePath());
    }
}
