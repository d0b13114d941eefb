package io.jhca.lab;

import org.junit.jupiter.api.extension.RegisterExtension;



/**
 * Every tool on two rxe devices named rxe0 and rxe1 (real RoCEv2 over UDP between two software HCAs in this
 * JVM). Their addresses are moved from the defaults (127.0.0.1/.2) to 127.0.71.1/.2 through the provider's
 * jhca.rxe.devices property, so this test never collides with another process that uses the default devices
 * (port 4791 can be bound once per address). Skipped, with the reason printed, while no rxe provider is on the
 * class path (it is written concurrently with these tools).
 */
class RxeToolsTest extends ToolsEndToEnd {

    @RegisterExtension
    static final DevicesProperty DEVICES = DevicesProperty.rxe("127.0.71.1", "127.0.71.2");

    @org.junit.jupiter.api.Test
    void statsAfterAnExchange() {
        String out = run("stats", dev0(), "--exchange", "10", "--qp", "17").ok().out();
        String[] lines = out.split("\n");
        org.junit.jupiter.api.Assertions.assertEquals(4, lines.length, out);
        org.junit.jupiter.api.Assertions.assertTrue(lines[0].startsWith("# 10 RDMA WRITEs of 4096 B from rxe0 QP 17 to rxe1 QP "), out);
        org.junit.jupiter.api.Assertions.assertTrue(lines[1].startsWith("link rxe0/1 sent_pkts "), out);
        org.junit.jupiter.api.Assertions.assertTrue(lines[2].startsWith("link rxe1/1 sent_pkts "), out);
        org.junit.jupiter.api.Assertions.assertTrue(lines[3].startsWith("link rxe0/1 lqpn 17 qp-type RC sent_pkts "), out);
        java.util.Map<String, Long> dev = pairs(lines[1], 2);
        java.util.Map<String, Long> qp = pairs(lines[3], 6);
        // 10 WRITEs of 4 packets (MTU 1024), 4176 B each; a retransmit timer that fired under load adds packets
        for (java.util.Map<String, Long> m : java.util.List.of(dev, qp)) {
            long resent = m.get("retransmitted_pkts");
            org.junit.jupiter.api.Assertions.assertEquals(40, m.get("sent_pkts") - resent, out);
            if (resent == 0) {
                org.junit.jupiter.api.Assertions.assertEquals(41760, m.get("sent_bytes"), out);
            }
            org.junit.jupiter.api.Assertions.assertTrue(m.get("rcvd_pkts") >= 10, out);
        }
        org.junit.jupiter.api.Assertions.assertEquals(0, dev.get("drop_ghost_response"), out);
        org.junit.jupiter.api.Assertions.assertTrue(dev.containsKey("drop_truncated"), out);
        org.junit.jupiter.api.Assertions.assertFalse(qp.containsKey("drop_truncated"), "a device-only counter: " + out);
        org.junit.jupiter.api.Assertions.assertTrue(pairs(lines[2], 2).get("rcvd_pkts") >= 40, out);
        String plain = run("stats", dev1()).ok().out();
        org.junit.jupiter.api.Assertions.assertTrue(plain.startsWith("link rxe1/1 sent_pkts 0 "), plain);
        Run none = run("stats", dev0(), "--qp", "17");
        org.junit.jupiter.api.Assertions.assertEquals(HwLab.EXIT_FAILURE, none.rc());
        org.junit.jupiter.api.Assertions.assertTrue(none.err().contains("no QP 17 in this process"), none.err());
    }

    /**
     * Two hwlab processes with no --warmup warm up as an in-process run does (what each offers in the version
     * exchange), and say so in their banners; the JSON records it. The measured count is still -n.
     */
    @org.junit.jupiter.api.Test
    void twoHwlabProcessesWarmUpByDefault(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) throws Exception {
        String port = Integer.toString(freePort());
        java.nio.file.Path json = dir.resolve("client.json");
        Run[] r = twoProcesses(new String[] {"perf", "send-lat", "--server", "-d", dev0(), "-p", port, "-n", "100"},
                new String[] {"perf", "send-lat", "-d", dev1(), "-p", port, "-n", "100", "--json", json.toString(), ip0()});
        for (Run side : r) {
            side.ok();
            org.junit.jupiter.api.Assertions.assertTrue(side.out().contains(" Warm-up         : "
                    + PerfTestCommand.IN_PROCESS_WARMUP + " iterations before the 100 measured"), side.out());
            org.junit.jupiter.api.Assertions.assertEquals(100, (int) numbers(rows(side.out(), PerfReport.LAT_HEADER).get(0))[1]);
        }
        com.fasterxml.jackson.databind.JsonNode j = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.toFile());
        org.junit.jupiter.api.Assertions.assertEquals(PerfTestCommand.IN_PROCESS_WARMUP, j.at("/hwlab/warmup_iterations").asInt());
        // the client of two hwlab processes prints the floors by default; on one host it runs both ends itself
        org.junit.jupiter.api.Assertions.assertTrue(r[1].out().contains(" UDP floor: the same ping-pong over plain UDP"
                + " DatagramChannels " + ip1() + " <-> " + ip0() + " (no RDMA):"), r[1].out());
        org.junit.jupiter.api.Assertions.assertTrue(r[1].out().contains("jhca / floor: t_typical"), r[1].out());
        org.junit.jupiter.api.Assertions.assertTrue(j.at("/results/0/udp_baseline/t_typical").asDouble() > 0, j.toString());
        org.junit.jupiter.api.Assertions.assertTrue(j.at("/udp_baseline_other_end").isMissingNode(), j.toString());
        org.junit.jupiter.api.Assertions.assertFalse(r[0].out().contains("UDP floor"), "the server answered none: " + r[0].out());
    }

    /**
     * Against C perftest, which offers no warm-up (here: sides that send none, as it does), each side warms up in
     * private on twins of its device, says so, measures -n from the first iteration with the peer, and leaves no twin
     * open (no UDP socket on port 4791 at the twins' addresses, 127.64-191.x.x, once the run is over).
     */
    @org.junit.jupiter.api.Test
    void againstAPeerThatOffersNoWarmUpEachSideWarmsUpInPrivate(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir)
            throws Exception {
        String port = Integer.toString(freePort());
        java.nio.file.Path json = dir.resolve("server.json");
        Run[] r;
        PerftestComm.sendOffers = false;
        try {
            r = twoProcesses(new String[] {"perf", "write-lat", "--server", "-d", dev0(), "-p", port, "-n", "100",
                            "--json", json.toString()},
                    new String[] {"perf", "write-lat", "-d", dev1(), "-p", port, "-n", "100", ip0()});
        } finally {
            PerftestComm.sendOffers = true;
        }
        for (Run side : r) {
            side.ok();
            org.junit.jupiter.api.Assertions.assertTrue(side.out().contains(" Warm-up         : "
                    + PerfTestCommand.IN_PROCESS_WARMUP + " iterations in " + PrivateWarmup.RUNS
                    + " runs between rxe devices of this process, before the 100 measured (the peer is not hwlab)"),
                    side.out());
            org.junit.jupiter.api.Assertions.assertEquals(100, (int) numbers(rows(side.out(), PerfReport.LAT_HEADER).get(0))[1]);
        }
        com.fasterxml.jackson.databind.JsonNode j = new com.fasterxml.jackson.databind.ObjectMapper().readTree(json.toFile());
        org.junit.jupiter.api.Assertions.assertEquals(0, j.at("/hwlab/warmup_iterations").asInt(), "none with the peer");
        org.junit.jupiter.api.Assertions.assertFalse(r[1].out().contains("UDP floor"),
                "against C perftest the floors are off unless asked for: " + r[1].out());
        org.junit.jupiter.api.Assertions.assertEquals(PerfTestCommand.IN_PROCESS_WARMUP,
                j.at("/hwlab/private_warmup_iterations").asInt());
        java.util.regex.Matcher twin = java.util.regex.Pattern.compile("(?m)^\\s*\\d+: [0-9A-F]{4}([0-9A-F]{2})7F:12B7 ")
                .matcher(java.nio.file.Files.readString(java.nio.file.Path.of("/proc/net/udp")));
        while (twin.find()) {
            int x = Integer.parseInt(twin.group(1), 16);
            org.junit.jupiter.api.Assertions.assertFalse(x >= 64 && x < 192, "a twin left open: " + twin.group());
        }
    }

    /** The name-value pairs of a stats line after its first {@code skip} words. */
    private static java.util.Map<String, Long> pairs(String line, int skip) {
        String[] w = line.trim().split(" ");
        java.util.Map<String, Long> m = new java.util.LinkedHashMap<>();
        for (int i = skip; i + 1 < w.length; i += 2) {
            m.put(w[i], Long.parseLong(w[i + 1]));
        }
        return m;
    }

    @Override
    String dev0() {
        return "rxe0";
    }

    @Override
    String dev1() {
        return "rxe1";
    }

    @Override
    String ip0() {
        return "127.0.71.1";
    }

    @Override
    String ip1() {
        return "127.0.71.2";
    }

    /** -e in thread progress (rxe's default): the tools sleep on their completion channels. */
    @org.junit.jupiter.api.Test
    void eventModeRuns() throws Exception {
        eventRuns();
    }

    /**
     * -e with the engines in caller progress mode: the event wait drives the engine between looks at the channel
     * (nothing else would move the packets), so the same runs finish.
     */
    @org.junit.jupiter.api.Test
    void eventModeRunsInCallerProgress() throws Exception {
        String key = "jhca.rxe.progress";
        String before = System.getProperty(key);
        System.setProperty(key, "caller");
        try {
            eventRuns();
        } finally {
            if (before == null) {
                System.clearProperty(key);
            } else {
                System.setProperty(key, before);
            }
        }
    }

    private void eventRuns() throws Exception {
        LatencyRow send = latency("send-lat", "-e", "--no-udp-baseline");
        org.junit.jupiter.api.Assertions.assertTrue(
                send.run().out().contains(" Test with events. Using " + dev1() + "_comp0\n"), send.run().out());
        org.junit.jupiter.api.Assertions.assertEquals(64, (int) latency("read-lat", "-e", "-s", "64", "--no-udp-baseline").n()[0]);
        org.junit.jupiter.api.Assertions.assertEquals(8, (int) latency("atomic-lat", "-e", "--no-udp-baseline").n()[0]);
        BwRow bw = bandwidth("send-bw", "-e", "-s", "2048", "-Q", "10");
        org.junit.jupiter.api.Assertions.assertEquals(ITERS, (int) bw.n()[1]);
        BwRow rd = bandwidth("read-bw", "-e", "-s", "4096", "-q", "2");
        org.junit.jupiter.api.Assertions.assertEquals(2 * ITERS, (int) rd.n()[1]);
        rcPingpongRun(true);
    }
}
