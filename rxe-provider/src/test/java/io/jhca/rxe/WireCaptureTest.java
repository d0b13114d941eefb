package io.jhca.rxe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import io.jhca.rxe.wire.Icrc;
import io.jhca.rxe.wire.RocePacket;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.QpType;
import io.jhca.verbs.RecvWr;
import io.jhca.verbs.SendFlags;
import io.jhca.verbs.SendWr;
import io.jhca.verbs.WcStatus;
import io.jhca.verbs.WrOpcode;

/**
 * Truth from outside: real traffic between two devices is captured on the loopback interface with tcpdump and
 * decoded with tshark. Every captured packet must carry IPv4 ID 0 and DF (what our ICRC assumed) and an ICRC that
 * verifies over the real IP header; the opcode, PSN and AckReq sequence must be what rxe would send.
 */
class WireCaptureTest {

    @TempDir
    Path tmp;

    @Test
    void capturedPacketsAreRoceV2AsRxeSendsThem() throws Exception {
        // one datagram a packet, as devices off loopback send them: on lo the kernel never splits a coalesced pair or
        // a burst, and a capture there shows it whole (CoalescedSegmentsTest checks those, split by the kernel)
        try (Rig r = new Rig(Rig.config("capA", ProgressMode.THREAD).gso(false).build(),
                Rig.config("capB", ProgressMode.THREAD).gso(false).build(),
                QpType.RC, 1 << 16, Mtu.MTU_1024, UnaryOperator.identity())) {
            final String hostA = r.a.config().address().getHostAddress();
            final String hostB = r.b.config().address().getHostAddress();
            final Path pcap = tmp.resolve("rxe.pcap");
            final Process dump = startTcpdump(pcap, "udp port 4791 and (host " + hostA + " or host " + hostB + ")");
            try {
                r.qpB.postRecv(new RecvWr().wrId(1).sge(r.mrB, 0, 8192));
                r.qpB.postRecv(new RecvWr().wrId(2).numSge(0));
                r.qpA.postSend(new SendWr().wrId(11).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED)
                        .sge(r.mrA, 0, 3 * 1024 + 5));
                r.expect(r.cqA, 11, WcStatus.SUCCESS);
                r.qpA.postSend(new SendWr().wrId(12).opcode(WrOpcode.RDMA_WRITE_WITH_IMM).immData(0xDEADBEEF)
                        .sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 100).rdma(r.mrB.address() + 8192, r.mrB.rkey()));
                r.expect(r.cqA, 12, WcStatus.SUCCESS);
                r.qpA.postSend(new SendWr().wrId(13).opcode(WrOpcode.RDMA_READ).sendFlags(SendFlags.SIGNALED)
                        .sge(r.mrA, 0, 2500).rdma(r.mrB.address(), r.mrB.rkey()));
                r.expect(r.cqA, 13, WcStatus.SUCCESS);
                r.qpA.postSend(new SendWr().wrId(14).opcode(WrOpcode.ATOMIC_FETCH_AND_ADD).sendFlags(SendFlags.SIGNALED)
                        .sge(r.mrA, 0, 8).atomic(r.mrB.address() + 16384, r.mrB.rkey(), 1, 0));
                r.expect(r.cqA, 14, WcStatus.SUCCESS);
                closingProbe(pcap, hostA);   // every packet above is in the file once this one is
            } finally {
                dump.destroy();
                dump.waitFor(10, TimeUnit.SECONDS);
            }
            // 1. every packet: IPv4 ID 0, DF, ICRC right over the real headers (the wire's Icrc as the checker)
            final List<byte[]> frames = withoutProbes(readPcap(pcap));
            assertEquals(13, frames.size(), () -> "captured frames in " + pcap + ", " + pcap.toFile().length() + " bytes; tcpdump said " + TCPDUMP_OUTPUT);
            final RocePacket p = new RocePacket();
            final Icrc icrc = new Icrc();
            for (final byte[] f : frames) {
                final UnsafeBuffer b = new UnsafeBuffer(f);
                assertTrue(p.parseEthernet(b, 0, f.length), "a RoCEv2 frame");
                assertEquals(0, p.identification(), "IPv4 ID 0 (IP_PMTUDISC_DO on an unconnected socket)");
                assertEquals(0x4000, p.flagsFragment(), "DF set, no fragment");
                assertTrue(icrc.verifyIpPacket(b, 14, f.length - 14), "ICRC verifies over the captured IP header");
            }
            // 2. tshark's decoding
            final List<String[]> rows = tshark(pcap);
            final int psnA = 0x1000; // Rig: A's sq_psn = B's rq_psn = 0x1000
            final String[][] want = {
                // src, opcode, psn offset, AckReq
                {"A", "0", "0", "0"}, {"A", "1", "1", "0"}, {"A", "1", "2", "0"}, {"A", "2", "3", "1"}, {"B", "17", "3", "0"},
                {"A", "11", "4", "1"}, {"B", "17", "4", "0"},
                {"A", "12", "5", "1"}, {"B", "13", "5", "0"}, {"B", "14", "6", "0"}, {"B", "15", "7", "0"},
                {"A", "20", "8", "1"}, {"B", "18", "8", "0"},
            };
            assertEquals(want.length, rows.size(), () -> "captured: " + describe(rows));
            for (int i = 0; i < want.length; i++) {
                final String[] row = rows.get(i);
                final int k = i;
                assertEquals(want[i][0].equals("A") ? hostA : hostB, row[0], () -> "row " + k + ": " + String.join(" ", row));
                assertEquals(want[i][1], row[1], () -> "opcode of row " + k);
                assertEquals(String.valueOf(psnA + Integer.parseInt(want[i][2])), row[2], () -> "PSN of row " + k);
                assertEquals(want[i][3].equals("1") ? "1" : "0", bool(row[3]), () -> "AckReq of row " + k);
                assertEquals("65535", row[4], "P_Key");
            }
            assertEquals("31", rows.get(4)[5], "ACK syndrome 0x1F");
            assertEquals("", rows.get(0)[6], "a SEND carries no RETH");
            assertEquals("100", rows.get(5)[6], "WRITE_ONLY_WITH_IMMEDIATE: RETH DMA length = message length");
            assertEquals("2500", rows.get(7)[6], "READ request: RETH DMA length");
            assertEquals("31", rows.get(8)[5], "READ_RESPONSE_FIRST carries AETH ACK");
            assertEquals("", rows.get(9)[5], "READ_RESPONSE_MIDDLE carries no AETH");
        }
    }

    @Test
    void deviceTraceIsAPcapTsharkDecodes() throws Exception {
        final Path trace = tmp.resolve("trace.pcap");
        try (Rig r = new Rig(Rig.config("trA", ProgressMode.CALLER).pcap(trace).build(),
                Rig.config("trB", ProgressMode.CALLER).build(), QpType.RC, 1 << 16, Mtu.MTU_1024, UnaryOperator.identity())) {
            r.qpB.postRecv(new RecvWr().wrId(1).sge(r.mrB, 0, 8192));
            r.qpA.postSend(new SendWr().wrId(2).opcode(WrOpcode.SEND).sendFlags(SendFlags.SIGNALED).sge(r.mrA, 0, 2000));
            r.expect(r.cqA, 2, WcStatus.SUCCESS);
        }
        final List<String[]> rows = tshark(trace);
        assertEquals(3, rows.size(), () -> describe(rows)); // SEND_FIRST, SEND_LAST (sent), ACK (received)
        assertEquals("0", rows.get(0)[1]);
        assertEquals("2", rows.get(1)[1]);
        assertEquals("17", rows.get(2)[1]);
        final Icrc icrc = new Icrc();
        final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(trace)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(101, b.getInt(20), "LINKTYPE_RAW");
        int at = 24;
        while (at + 16 <= b.limit()) {
            final int incl = b.getInt(at + 8);
            assertTrue(icrc.verifyIpPacket(new UnsafeBuffer(b.array(), at + 16, incl), 0, incl), "traced ICRC verifies");
            at += 16 + incl;
        }
    }

    private static String bool(final String s) {
        return s.equals("True") || s.equals("1") ? "1" : "0";
    }

    private static String describe(final List<String[]> rows) {
        final StringBuilder sb = new StringBuilder();
        for (final String[] r : rows) {
            sb.append('\n').append(String.join(" ", r));
        }
        return sb.toString();
    }

    static final StringBuffer TCPDUMP_OUTPUT = new StringBuffer();

    /** Source of the closing probe (port 4791, so the capture's filter takes it); no device of the tests uses it. */
    static final String PROBE_HOST = "127.0.0.143";

    /**
     * Sends one datagram from {@link #PROBE_HOST}:4791 to {@code host}:9 (nothing listens there) and waits until the
     * capture file holds it. Loopback hands a sent packet to the capture socket before sendto returns, and tcpdump
     * (-U, --immediate-mode) writes what it takes in order, so every packet sent before the probe is in the file
     * then; a fixed pause instead could end a capture whose tcpdump had not been scheduled yet.
     */
    static void closingProbe(final Path pcap, final String host) throws IOException, InterruptedException {
        try (java.nio.channels.DatagramChannel ch = java.nio.channels.DatagramChannel.open()) {
            ch.bind(new java.net.InetSocketAddress(PROBE_HOST, 4791));
            ch.send(ByteBuffer.wrap(new byte[] {'j', 'h', 'c', 'a'}), new java.net.InetSocketAddress(host, 9));
        }
        final byte[] probe = java.net.InetAddress.getByName(PROBE_HOST).getAddress();
        final long deadline = System.nanoTime() + 20_000_000_000L;
        while (System.nanoTime() < deadline) {
            for (final byte[] f : readWhole(pcap)) {
                if (isFrom(f, probe)) {
                    return;
                }
            }
            Thread.sleep(5);
        }
        fail("tcpdump did not write the closing probe within 20 s; it said " + TCPDUMP_OUTPUT);
    }

    /** The frames of {@code frames} that are not the closing probe. */
    static List<byte[]> withoutProbes(final List<byte[]> frames) throws IOException {
        final byte[] probe = java.net.InetAddress.getByName(PROBE_HOST).getAddress();
        final List<byte[]> out = new ArrayList<>();
        for (final byte[] f : frames) {
            if (!isFrom(f, probe)) {
                out.add(f);
            }
        }
        return out;
    }

    /** Whether an Ethernet frame of lo carries IPv4 from {@code src}. */
    private static boolean isFrom(final byte[] frame, final byte[] src) {
        return frame.length >= 34 && frame[12] == 0x08 && frame[13] == 0x00
                && java.util.Arrays.equals(frame, 26, 30, src, 0, 4);
    }

    /** The whole records of a capture file still being written (a record cut short at its end is left out). */
    private static List<byte[]> readWhole(final Path file) throws IOException {
        final List<byte[]> out = new ArrayList<>();
        records(ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN), out);
        return out;
    }

    /**
     * Adds the data of {@code b}'s records after the 24-byte file header to {@code out}, up to the first one cut short;
     * returns where that one starts (the buffer's end if none is).
     */
    private static int records(final ByteBuffer b, final List<byte[]> out) {
        int at = 24;
        while (at + 16 <= b.limit()) {
            final int incl = b.getInt(at + 8);
            if (incl < 0 || at + 16 + incl > b.limit()) {
                return at;
            }
            final byte[] data = new byte[incl];
            b.get(at + 16, data);
            out.add(data);
            at += 16 + incl;
        }
        return b.limit();
    }

    static Process startTcpdump(final Path file, final String filter) throws IOException, InterruptedException {
        final Path tcpdump = Path.of("/usr/bin/tcpdump");
        if (!Files.isExecutable(tcpdump)) {
            fail("tcpdump not found: install the 'tcpdump' package (the project's test command installs it)");
        }
        final Process p = new ProcessBuilder(tcpdump.toString(), "-i", "lo", "--immediate-mode", "-U", "-n", "-s", "0", "-w", file.toString(),
                filter).redirectErrorStream(true).start();
        final BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        final String line = out.readLine(); // "tcpdump: listening on lo, ..." once the capture runs
        if (line == null || !line.contains("listening on")) {
            p.destroy();
            fail("tcpdump could not capture on lo (needs root or CAP_NET_RAW): " + line);
        }
        new Thread(() -> {
            try {
                String l;
                while ((l = out.readLine()) != null) {
                    TCPDUMP_OUTPUT.append(l).append('\n');
                }
            } catch (final IOException e) {
                // process gone
            }
        }).start();
        return p;
    }

    static List<byte[]> readPcap(final Path file) throws IOException {
        final ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file)).order(ByteOrder.LITTLE_ENDIAN);
        assertEquals(0xA1B2C3D4, b.getInt(0), "classic little-endian pcap from tcpdump");
        assertEquals(1, b.getInt(20), "Linux lo is captured as Ethernet");
        final List<byte[]> out = new ArrayList<>();
        final int cut = records(b, out);
        assertEquals(b.limit(), cut, "a record cut short at byte " + cut + " of " + file);
        return out;
    }

    /** src, opcode, psn, AckReq, P_Key, AETH syndrome, RETH DMA length of every packet. */
    static List<String[]> tshark(final Path pcap) throws IOException, InterruptedException {
        final Path tshark = Path.of("/usr/bin/tshark");
        if (!Files.isExecutable(tshark)) {
            fail("tshark not found: install the 'tshark' package (the project's test command installs it)");
        }
        final Process p = new ProcessBuilder(tshark.toString(), "-r", pcap.toString(), "-n",
                "--disable-heuristic", "rpcrdma_infiniband", "-Y", "!(ip.addr == " + PROBE_HOST + ")",
                "-T", "fields", "-E", "separator=|",
                "-e", "ip.src", "-e", "infiniband.bth.opcode", "-e", "infiniband.bth.psn", "-e", "infiniband.bth.a",
                "-e", "infiniband.bth.p_key", "-e", "infiniband.aeth.syndrome", "-e", "infiniband.reth.dmalen")
                .redirectError(ProcessBuilder.Redirect.DISCARD).start();
        final String text = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(p.waitFor(60, TimeUnit.SECONDS));
        final List<String[]> rows = new ArrayList<>();
        for (final String line : text.split("\n")) {
            if (!line.isBlank()) {
                rows.add(line.split("\\|", -1));
            }
        }
        return rows;
    }
}
