package io.jhca.rxe.wire;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Header codecs against Wireshark's InfiniBand dissector (tshark 4.0, rocev2.md §5): one packet per valid opcode
 * with known field values; every field tshark reports must be what we encoded, which also pins each opcode's
 * header layout (a wrong offset or length shifts every later field and the payload).
 */
class TsharkOracleTest {

    private static final String[] FIELDS = {
        "frame.number",
        "infiniband.bth.opcode", "infiniband.bth.se", "infiniband.bth.m", "infiniband.bth.padcnt",
        "infiniband.bth.tver", "infiniband.bth.p_key", "infiniband.bth.destqp", "infiniband.bth.a",
        "infiniband.bth.psn",
        "infiniband.reth.va", "infiniband.reth.r_key", "infiniband.reth.dmalen",
        "infiniband.aeth.syndrome", "infiniband.aeth.msn",
        "infiniband.atomiceth.swapdt", "infiniband.atomiceth.cmpdt",
        "infiniband.atomicacketh.origremdt",
        "infiniband.deth.q_key", "infiniband.deth.srcqp",
        "infiniband.immdt", "infiniband.ieth",
        "infiniband.invariant.crc", "data.data",
    };
    private static final int[] AETH_SYNDROMES = {0x1F, 0x2E, 0x60, 0x61, 0x62, 0x63, 0x00, 0x3F};

    @TempDir
    Path dir;

    private final Icrc icrc = new Icrc();
    private final RocePacket packet = new RocePacket();
    private final Bth bth = new Bth();
    private final Reth reth = new Reth();
    private final Aeth aeth = new Aeth();
    private final AtomicEth atomicEth = new AtomicEth();
    private final AtomicAckEth atomicAckEth = new AtomicAckEth();
    private final ImmDt immDt = new ImmDt();
    private final Deth deth = new Deth();
    private final Ieth ieth = new Ieth();

    private static List<String> tshark(final Path pcap, final String... fields) throws Exception {
        final List<String> cmd = new ArrayList<>(List.of("tshark", "-r", pcap.toString(),
                "--disable-heuristic", "rpcrdma_infiniband", "-T", "fields", "-E", "separator=|",
                "-E", "occurrence=f"));
        for (final String f : fields) {
            cmd.add("-e");
            cmd.add(f);
        }
        final TestSupport.Result r = TestSupport.run("tshark", cmd, 120);
        assertEquals(0, r.exitCode(), r.stderr());
        return r.stdout().lines().toList();
    }

    private static String hex8(final int v) {
        return String.format("%08x", v);
    }

    @Test
    void everyOpcodeDecodesToWhatWeEncoded() throws Exception {
        final List<String> expected = new ArrayList<>();
        final Path eth = dir.resolve("eth.pcap");
        final Path raw = dir.resolve("raw.pcap");
        final Random rnd = new Random(11);
        final UnsafeBuffer b = new UnsafeBuffer(new byte[4096]);
        try (PcapWriter we = PcapWriter.create(eth, PcapWriter.LINKTYPE_ETHERNET);
             PcapWriter wr = PcapWriter.create(raw, PcapWriter.LINKTYPE_RAW)) {
            int frame = 0;
            for (final int op : ScapyOracleTest.validOpcodes()) {
                for (int variant = 0; variant < 2; variant++) {
                    frame++;
                    expected.add(encode(b, op, frame, variant, rnd));
                    final int length = packet.encode(b, 0, packet.roceLength(), icrc);
                    we.writeIpPacket(b, 0, length, frame * 1_000_000L);
                    wr.writeIpPacket(b, 0, length, frame * 1_000_000L);
                }
            }
        }
        final List<String> fromEth = tshark(eth, FIELDS);
        final List<String> fromRaw = tshark(raw, FIELDS);
        assertEquals(expected.size(), fromEth.size(), "one line per frame");
        for (int i = 0; i < expected.size(); i++) {
            assertEquals(expected.get(i), fromEth.get(i), "frame " + (i + 1) + " (Ethernet pcap)");
        }
        assertEquals(fromEth, fromRaw, "LINKTYPE_RAW pcap decodes the same");
        // Our decoders read the same frames back to the same values.
        final List<byte[]> frames = TestSupport.readPcap(eth, PcapWriter.LINKTYPE_ETHERNET);
        for (int i = 0; i < frames.size(); i++) {
            assertEquals(fromEth.get(i), decode(i + 1, frames.get(i)), "frame " + (i + 1) + " decoded by us");
        }
    }

    /** The tshark line for a frame, produced by our parser and header flyweights. */
    private String decode(final int frameNumber, final byte[] frame) {
        final UnsafeBuffer b = new UnsafeBuffer(frame);
        final RocePacket parsed = new RocePacket();
        assertTrue(parsed.parseEthernet(b, 0, frame.length));
        final int roce = parsed.roceIndex();
        bth.wrap(b, roce);
        final int op = bth.opcode();
        final StringBuilder line = new StringBuilder();
        line.append(frameNumber).append('|').append(op).append('|').append(bth.se() ? 1 : 0).append('|')
                .append(bth.migReq() ? 1 : 0).append('|').append(bth.padCnt()).append('|').append(bth.tVer())
                .append('|').append(bth.pkey()).append('|').append(String.format("0x%06x", bth.destQp()))
                .append('|').append(bth.ackReq() ? 1 : 0).append('|').append(bth.psn());
        String[] f = new String[13];
        java.util.Arrays.fill(f, "");
        if (Opcode.rethOffset(op) >= 0) {
            reth.wrap(b, roce + Opcode.rethOffset(op));
            f[0] = String.format("0x%016x", reth.va());
            f[1] = String.format("0x%08x", reth.rkey());
            f[2] = Long.toString(reth.dmaLengthUnsigned());
        }
        if (Opcode.aethOffset(op) >= 0) {
            aeth.wrap(b, roce + Opcode.aethOffset(op));
            f[3] = Integer.toString(aeth.syndrome());
            f[4] = Integer.toString(aeth.msn());
        }
        if (Opcode.atomicEthOffset(op) >= 0) {
            atomicEth.wrap(b, roce + Opcode.atomicEthOffset(op));
            f[0] = String.format("0x%016x", atomicEth.va());
            f[1] = String.format("0x%08x", atomicEth.rkey());
            f[5] = Long.toUnsignedString(atomicEth.swapAdd());
            f[6] = Long.toUnsignedString(atomicEth.compare());
        }
        if (Opcode.atomicAckEthOffset(op) >= 0) {
            f[7] = Long.toUnsignedString(atomicAckEth.wrap(b, roce + Opcode.atomicAckEthOffset(op)).origRemoteData());
        }
        if (Opcode.dethOffset(op) >= 0) {
            deth.wrap(b, roce + Opcode.dethOffset(op));
            f[8] = String.format("0x%016x", deth.qkey() & 0xFFFFFFFFL);
            f[9] = String.format("0x%08x", deth.srcQp());
        }
        if (Opcode.immDtOffset(op) >= 0) {
            f[10] = hex8(immDt.wrap(b, roce + Opcode.immDtOffset(op)).immediate());
        }
        if (Opcode.iethOffset(op) >= 0) {
            f[11] = hex8(ieth.wrap(b, roce + Opcode.iethOffset(op)).rkey());
        }
        f[12] = String.format("0x%08x", Integer.reverseBytes(parsed.icrc()));
        for (final String s : f) {
            line.append('|').append(s);
        }
        final int start = roce + Opcode.payloadOffset(op);
        return line.append('|').append(HexFormat.of().formatHex(frame, start, roce + parsed.roceLength())).toString();
    }

    /**
     * Writes one packet of {@code op} with values derived from {@code n} and returns the tshark line expected for
     * it; {@code packet.roceLength()} is set for the caller.
     */
    private String encode(final UnsafeBuffer b, final int op, final int n, final int variant, final Random rnd) {
        packet.ipv4(TestSupport.ipv4(10, 0, 0, 1), TestSupport.ipv4(10, 0, 0, 2)).identification(n)
                .udpPorts(0xC000 + n, 4791).udpChecksum(0);
        final int roce = packet.roceOffset();
        final int payload = Opcode.hasPayload(op) ? (variant == 0 ? n % 4 + 1 : 0x40 + n % 4) : 0;
        final int pad = Bth.padFor(payload);
        final boolean se = (n & 1) != 0;
        final boolean migReq = (n & 2) != 0;
        final boolean ackReq = (n & 4) != 0;
        final int pkey = variant == 0 ? 0xFFFF : 0x7FFF;
        final int qpn = variant == 0 ? 0x000002 + n : 0xFFFFFF - n;
        final int psn = variant == 0 ? n * 0x10101 : 0xFFFFFF - n;
        bth.wrap(b, roce).set(op, se, pad, pkey, qpn, ackReq, psn);
        bth.migReq(migReq);
        final StringBuilder line = new StringBuilder();
        line.append(n).append('|').append(op).append('|').append(se ? 1 : 0).append('|').append(migReq ? 1 : 0)
                .append('|').append(pad).append("|0|").append(pkey).append('|').append(String.format("0x%06x", qpn))
                .append('|').append(ackReq ? 1 : 0).append('|').append(psn);

        final long va = variant == 0 ? 0x0102030405060708L * n : -1L - n;
        final int rkey = variant == 0 ? 0x1000 + n : 0xF0000000 | n;
        final int dmaLen = variant == 0 ? 0x10000 * n + payload : 0x80000000 | n; // > 2^31: unsigned
        String rethVa = "";
        String rethRkey = "";
        String rethLen = "";
        if (Opcode.rethOffset(op) >= 0) {
            reth.wrap(b, roce + Opcode.rethOffset(op)).set(va, rkey, dmaLen);
            rethVa = String.format("0x%016x", va);
            rethRkey = String.format("0x%08x", rkey);
            rethLen = Integer.toUnsignedString(dmaLen);
        }
        String syndrome = "";
        String msn = "";
        if (Opcode.aethOffset(op) >= 0) {
            final int s = AETH_SYNDROMES[(n + variant) % AETH_SYNDROMES.length];
            final int m = variant == 0 ? n * 3 : 0xFFFFFF - n;
            aeth.wrap(b, roce + Opcode.aethOffset(op)).set(s, m);
            syndrome = Integer.toString(s);
            msn = Integer.toString(m);
        }
        String swap = "";
        String compare = "";
        if (Opcode.atomicEthOffset(op) >= 0) {
            final long sw = variant == 0 ? 0x1111111111111111L * (n % 15) : Long.MIN_VALUE + n;
            final long cmp = variant == 0 ? n : -2L;
            atomicEth.wrap(b, roce + Opcode.atomicEthOffset(op)).set(va, rkey, sw, cmp);
            rethVa = String.format("0x%016x", va); // tshark reports AtomicETH VA / R_Key as reth.* (rocev2.md §5)
            rethRkey = String.format("0x%08x", rkey);
            swap = Long.toUnsignedString(sw);
            compare = Long.toUnsignedString(cmp);
        }
        String orig = "";
        if (Opcode.atomicAckEthOffset(op) >= 0) {
            final long o = variant == 0 ? 0xA5A5A5A5A5A5A5A5L ^ n : n;
            atomicAckEth.wrap(b, roce + Opcode.atomicAckEthOffset(op)).origRemoteData(o);
            orig = Long.toUnsignedString(o);
        }
        String qkey = "";
        String srcQp = "";
        if (Opcode.dethOffset(op) >= 0) {
            final int q = variant == 0 ? Deth.GSI_QKEY : 0x11111111 + n;
            final int s = variant == 0 ? 0x11 + n : 0xFFFFFF;
            deth.wrap(b, roce + Opcode.dethOffset(op)).set(q, s);
            qkey = String.format("0x%016x", q & 0xFFFFFFFFL);
            srcQp = String.format("0x%08x", s);
        }
        String imm = "";
        if (Opcode.immDtOffset(op) >= 0) {
            final int v = variant == 0 ? 0xDEADBEEF ^ n : n;
            immDt.wrap(b, roce + Opcode.immDtOffset(op)).immediate(v);
            imm = hex8(v);
        }
        String inv = "";
        if (Opcode.iethOffset(op) >= 0) {
            final int v = 0x12345600 | n;
            ieth.wrap(b, roce + Opcode.iethOffset(op)).rkey(v);
            inv = hex8(v);
        }
        final int start = roce + Opcode.payloadOffset(op);
        for (int i = 0; i < payload; i++) {
            b.putByte(start + i, (byte) ('a' + rnd.nextInt(26)));
        }
        for (int i = 0; i < pad; i++) {
            b.putByte(start + payload + i, (byte) 0);
        }
        final int roceLength = Opcode.payloadOffset(op) + payload + pad;
        final int length = packet.encode(b, 0, roceLength, icrc);
        final byte[] data = new byte[payload + pad];
        b.getBytes(start, data);
        // tshark shows the 4 ICRC wire bytes read big-endian: the byte-swapped CRC value.
        final int wireBigEndian = Integer.reverseBytes(Icrc.get(b, length - Icrc.LENGTH));
        line.append('|').append(rethVa).append('|').append(rethRkey).append('|').append(rethLen)
                .append('|').append(syndrome).append('|').append(msn)
                .append('|').append(swap).append('|').append(compare).append('|').append(orig)
                .append('|').append(qkey).append('|').append(srcQp).append('|').append(imm).append('|').append(inv)
                .append('|').append(String.format("0x%08x", wireBigEndian))
                .append('|').append(HexFormat.of().formatHex(data));
        return line.toString();
    }

    /** RNR timer table against Wireshark's rendering of the AETH timer ("Timer: 1.28 ms (14)"). */
    @Test
    void rnrTimerTableMatchesWireshark() throws Exception {
        final Path pcap = dir.resolve("rnr.pcap");
        final UnsafeBuffer b = new UnsafeBuffer(new byte[256]);
        try (PcapWriter w = PcapWriter.create(pcap, PcapWriter.LINKTYPE_RAW)) {
            for (int code = 0; code < RnrTimer.CODES; code++) {
                packet.ipv4(1, 2).udpPorts(0xC000, 4791);
                final int roce = packet.roceOffset();
                bth.wrap(b, roce).set(Opcode.RC_ACKNOWLEDGE, false, 0, 0xFFFF, 0x11, false, code);
                aeth.wrap(b, roce + Bth.LENGTH).set(Aeth.rnrNakSyndrome(code), 7);
                w.writeIpPacket(b, 0, packet.encode(b, 0, Bth.LENGTH + Aeth.LENGTH, icrc), code);
            }
        }
        final TestSupport.Result r = TestSupport.run("tshark",
                List.of("tshark", "-r", pcap.toString(), "-V"), 120);
        assertEquals(0, r.exitCode(), r.stderr());
        final Matcher m = Pattern.compile("Timer: ([0-9.]+) ms \\((\\d+)\\)").matcher(r.stdout());
        int seen = 0;
        while (m.find()) {
            final int code = Integer.parseInt(m.group(2));
            final long nanos = Math.round(Double.parseDouble(m.group(1)) * 1_000_000);
            assertEquals(seen, code, "frames in order");
            assertEquals(nanos, RnrTimer.nanos(code), "code " + code + ": Wireshark says " + m.group(1) + " ms");
            seen++;
        }
        assertEquals(RnrTimer.CODES, seen);
        assertTrue(Aeth.type(Aeth.rnrNakSyndrome(14)) == Aeth.TYPE_RNR_NAK);
    }
}
