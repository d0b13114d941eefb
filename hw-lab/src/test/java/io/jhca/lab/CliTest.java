package io.jhca.lab;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Command-line parsing: every option reaches its field, perftest's defaults apply, misuse exits 2 with usage. */
class CliTest {

    record Run(int rc, String out, String err) {
    }

    static Run run(String... args) {
        StringWriter o = new StringWriter();
        StringWriter e = new StringWriter();
        int rc = HwLab.execute(args, new PrintWriter(o), new PrintWriter(e));
        return new Run(rc, o.toString(), e.toString());
    }

    static PerfParams perf(String... args) {
        ParseResult pr = new CommandLine(new HwLab()).parseArgs(args);
        return ((PerfTestCommand) pr.subcommand().subcommand().commandSpec().userObject()).params();
    }

    static RcPingpong.Options pingpong(String... args) {
        ParseResult pr = new CommandLine(new HwLab()).parseArgs(args);
        return ((RcPingpongCommand) pr.subcommand().commandSpec().userObject()).options();
    }

    @Test
    void perfEveryOption() {
        PerfParams p = perf("perf", "write-bw", "-d", "rxe0", "-i", "1", "-s", "4096", "-n", "77", "-m", "2048", "-x", "0",
                "-p", "19000", "-q", "4", "-I", "64", "-t", "64", "-r", "32", "-Q", "8", "--report_gbits", "-u", "18",
                "-S", "3", "--bind", "127.0.0.1", "--json", "out.json", "--plot", "bw.png", "--udp-baseline",
                "--stall-timeout", "9", "127.0.0.1");
        assertEquals(PerfTest.WRITE_BW, p.test());
        assertEquals(PerfParams.Role.CLIENT, p.role());
        assertEquals("rxe0", p.device());
        assertEquals(1, p.ibPort());
        assertEquals(4096, p.size());
        assertEquals(77, p.iters());
        assertEquals(2048, p.mtu());
        assertEquals(0, p.gidIndex());
        assertEquals(19000, p.tcpPort());
        assertEquals(4, p.numQps());
        assertEquals(64, p.inlineSize());
        assertEquals(64, p.txDepth());
        assertEquals(32, p.rxDepth());
        assertEquals(8, p.cqMod());
        assertTrue(p.reportGbits());
        assertEquals(18, p.qpTimeout());
        assertEquals(3, p.sl());
        assertEquals("127.0.0.1", p.bind());
        assertEquals(Path.of("out.json"), p.json());
        assertEquals(Path.of("bw.png"), p.plot());
        assertTrue(p.udpBaseline());
        assertEquals(9000, p.stallMillis());
        assertEquals("127.0.0.1", p.server());
    }

    @Test
    void perfDefaultsArePerftests() {
        PerfParams lat = perf("perf", "write-lat");
        assertEquals(PerfParams.Role.BOTH, lat.role());
        assertEquals(2, lat.size());
        assertEquals(1000, lat.iters());
        assertEquals(0, lat.tcpPort(), "in-process runs take a free port");
        assertTrue(lat.udpBaseline(), "UDP floor on by default for in-process latency");
        assertNull(lat.gidIndex());
        assertEquals(-1, lat.inlineSize(), "per-test default, capped by the device later");
        assertEquals(14, lat.qpTimeout());
        assertEquals(PerfTestCommand.IN_PROCESS_WARMUP, lat.warmupIters(), "in-process latency runs warm up");
        assertEquals(0, perf("perf", "write-lat", "--server").warmupIters(), "the peer may be the C perftest");
        assertEquals(0, perf("perf", "write-lat", "localhost").warmupIters(), "the peer may be the C perftest");
        assertEquals(7, perf("perf", "write-lat", "--server", "--warmup", "7").warmupIters());
        assertEquals(0, perf("perf", "write-lat", "-D", "5", "-f", "1").warmupIters(), "-D has its margin instead");
        assertEquals(PerfTestCommand.IN_PROCESS_BW_WARMUP, perf("perf", "write-bw").warmupIters(),
                "in-process bandwidth runs warm up");
        assertEquals(300, perf("perf", "send-bw", "--warmup", "300").warmupIters());
        assertEquals(0, perf("perf", "write-bw", "--server").warmupIters(), "the peer may be the C perftest");
        assertEquals(0, perf("perf", "send-bw", "-D", "5", "-f", "1").warmupIters(), "-D has its margin instead");
        // what a side offers a hwlab peer in the version exchange (PeerOffer): the default, or --warmup as given
        assertEquals(new PeerOffer(PerfTestCommand.IN_PROCESS_WARMUP, false, true), perf("perf", "write-lat", "--server").offer());
        assertEquals(new PeerOffer(PerfTestCommand.IN_PROCESS_BW_WARMUP, false, true), perf("perf", "send-bw", "localhost").offer());
        assertEquals(new PeerOffer(0, true, true), perf("perf", "write-lat", "--server", "--warmup", "0").offer());
        assertEquals(new PeerOffer(7, true, true), perf("perf", "read-lat", "localhost", "--warmup", "7").offer());

        PerfParams bw = perf("perf", "write-bw", "--server", "--no-udp-baseline");
        assertEquals(PerfParams.Role.SERVER, bw.role());
        assertEquals(65536, bw.size());
        assertEquals(5000, bw.iters(), "DEF_ITERS_WB");
        assertEquals(18515, bw.tcpPort());
        assertEquals(1, bw.cqMod(), "perftest turns CQ moderation off above 8192 bytes");
        assertFalse(bw.udpBaseline());

        assertEquals(100, perf("perf", "send-bw", "-s", "8192").cqMod());
        assertEquals(8, perf("perf", "atomic-lat").size());
        assertEquals(1000, perf("perf", "read-bw").iters());
        PerfParams all = perf("perf", "send-lat", "-a", "-D", "0");
        assertTrue(all.all());
        assertEquals(23, all.sizes().size());
        assertEquals(2, all.sizes().get(0));
        assertEquals(1 << 23, all.sizes().get(22));
        PerfParams dur = perf("perf", "read-lat", "-D", "7", "-f", "1");
        assertEquals(7, dur.duration());
        assertEquals(1, dur.margin());
        assertThrows(ParameterException.class, () -> perf("perf", "write-lat", "--warmup", "-1"));
        assertEquals("rxe1", perf("perf", "read-lat", "--peer-dev", "rxe1").peerDevice());
    }

    @Test
    void rcPingpongEveryOptionAndDefaults() {
        RcPingpong.Options o = pingpong("rc-pingpong", "-p", "18600", "-d", "rxe1", "-i", "1", "-s", "1024", "-m", "2048",
                "-r", "100", "-n", "50", "-l", "2", "-g", "0", "--bind", "127.0.0.2", "--stall-timeout", "5", "127.0.0.1");
        assertEquals(new RcPingpong.Options("rxe1", 1, 0, 1024, 50, 2048, 100, 18600, 2, "127.0.0.1", "127.0.0.2", 5000),
                o);
        RcPingpong.Options d = pingpong("rc-pingpong");
        assertEquals(new RcPingpong.Options(null, 1, null, 4096, 1000, 1024, 500, 18515, 0, null, null, 30000), d,
                "ibv_rc_pingpong's defaults; -g defaults to the IPv4-mapped GID at run time");
    }

    @Test
    void usageErrorsExitTwoWithUsage() {
        String[][] bad = {
            {},
            {"nosuchcommand"},
            {"perf"},
            {"perf", "write-lat", "--no-such-option"},
            {"perf", "write-lat", "-m", "1000"},
            {"perf", "write-lat", "-n", "3"},
            {"perf", "write-lat", "-n", "many"},
            {"perf", "write-lat", "--server", "127.0.0.1"},
            {"perf", "write-lat", "-q", "2"},
            {"perf", "write-bw", "-s", "0"},
            {"perf", "write-bw", "-s", "16777216"},
            {"perf", "atomic-lat", "-s", "16"},
            {"perf", "atomic-lat", "-a"},
            {"perf", "write-bw", "-D", "3"},
            {"perf", "write-bw", "-D", "5", "-a"},
            {"perf", "write-bw", "-Q", "0"},
            {"perf", "write-bw", "-I", "1000"},
            {"perf", "write-bw", "-u", "32"},
            {"perf", "write-bw", "-S", "16"},
            {"perf", "write-bw", "-p", "70000"},
            {"perf", "write-lat", "--plot", "x.txt"},
            {"perf", "write-lat", "--peer-dev", "rxe1", "--server"},
            {"perf", "write-lat", "a", "b"},
            {"rc-pingpong", "-m", "1000"},
            {"rc-pingpong", "-s", "0"},
            {"rc-pingpong", "-l", "16"},
            {"rc-pingpong", "a", "b"},
            {"devinfo", "-i", "0"},
            {"devices", "extra"},
        };
        for (String[] args : bad) {
            Run r = run(args);
            assertEquals(HwLab.EXIT_USAGE, r.rc(), String.join(" ", args) + "\n" + r.err());
            assertTrue(r.err().contains("Usage:"), "usage printed for: " + String.join(" ", args) + "\n" + r.err());
        }
    }

    @Test
    void eventsAsPerftestAllowsThem() {
        assertTrue(perf("perf", "send-lat", "-e").events());
        assertTrue(perf("perf", "read-bw", "--events").events());
        assertFalse(perf("perf", "send-lat").events());
        assertEquals(1, perf("perf", "send-bw", "-s", "65536").cqMod(), "moderation off above 8192 B");
        assertEquals(100, perf("perf", "send-bw", "-s", "65536", "-e").cqMod(), "but not with -e (perftest)");
        assertTrue(pingpong("rc-pingpong", "-e").events());
        assertFalse(pingpong("rc-pingpong").events());
        String[][] refused = {
            {"perf", "write-lat", "-e"},
            {"perf", "write-bw", "--events"},
            {"perf", "send-lat", "-e", "-D", "5"},
        };
        String[] why = {"Events feature not available on WRITE verb", "Events feature not available on WRITE verb",
            "Duration mode doesn't work with events"};
        for (int i = 0; i < refused.length; i++) {
            Run r = run(refused[i]);
            assertEquals(HwLab.EXIT_USAGE, r.rc(), String.join(" ", refused[i]) + "\n" + r.err());
            assertTrue(r.err().contains(why[i]), r.err());
        }
    }

    @Test
    void latencyGapAsPerftest() {
        assertEquals(0, perf("perf", "write-lat").latencyGap());
        assertEquals(250, perf("perf", "send-lat", "--latency_gap", "250").latencyGap());
        assertEquals(250_000L, perf("perf", "read-lat", "--latency_gap", "250").latencyGapNanos());
        String[][] refused = {
            {"perf", "write-bw", "--latency_gap", "10"},
            {"perf", "write-lat", "--latency_gap", "-1"},
        };
        String[] why = {"Latency gap feature is only for latency tests", "--latency_gap must be >= 0"};
        for (int i = 0; i < refused.length; i++) {
            Run r = run(refused[i]);
            assertEquals(HwLab.EXIT_USAGE, r.rc(), String.join(" ", refused[i]) + "\n" + r.err());
            assertTrue(r.err().contains(why[i]), r.err());
        }
    }

    @Test
    void helpExitsZero() {
        for (String[] args : new String[][] {{"--help"}, {"perf", "--help"}, {"perf", "write-lat", "--help"},
                {"rc-pingpong", "--help"}, {"devinfo", "-h"}, {"devices", "--help"}, {"help", "perf"}}) {
            Run r = run(args);
            assertEquals(0, r.rc(), String.join(" ", args));
            assertTrue(r.out().contains("Usage:"), r.out());
        }
        assertTrue(run("perf", "send-bw", "--help").out().contains("--report_gbits"));
    }

    @Test
    void runtimeFailuresExitOneWithAMessage() {
        Run r = run("devinfo", "-d", "no_such_dev");
        assertEquals(HwLab.EXIT_FAILURE, r.rc());
        assertTrue(r.err().contains("IB device 'no_such_dev' wasn't found"), r.err());
        assertFalse(r.err().contains("Usage:"));
        assertFalse(r.err().contains("\tat "), "no stack trace: " + r.err());

        Run p = run("perf", "write-lat", "-d", "no_such_dev");
        assertEquals(HwLab.EXIT_FAILURE, p.rc());
        assertTrue(p.err().contains("no_such_dev"), p.err());
    }
}
