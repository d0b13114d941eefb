package io.jhca.rxe.replay;

import java.io.IOException;
import java.io.InputStream;
import java.io.ByteArrayOutputStream;
import java.net.Inet4Address;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A captured run between a requester (the Linux rxe guest) and jhca as responder: the RoCEv2 packets in capture
 * order and the connection parameters each side announced over the TCP exchange.
 */
final class Capture {

    static final int ROCE_V2_PORT = 4791;
    static final int EXCHANGE_PORT = 18515;

    /** What one side announced: its QPN and first PSN; for perftest also the rkey and VA of its buffer. */
    static final class Dest {
        final int qpn;
        final int psn;
        final int rkey;
        final long va;
        final byte[] gid;

        Dest(final int qpn, final int psn, final int rkey, final long va, final byte[] gid) {
            this.qpn = qpn;
            this.psn = psn;
            this.rkey = rkey;
            this.va = va;
            this.gid = gid;
        }

        @Override
        public String toString() {
            return String.format("qpn 0x%x psn 0x%x rkey 0x%x va 0x%x", qpn, psn, rkey, va);
        }
    }

    final String name;
    final Inet4Address requester;
    final Inet4Address responder;
    final List<ClassicPcap.IpPacket> roce = new ArrayList<>();
    final Dest requesterDest;
    final Dest responderDest;

    /**
     * rc_pingpong's message: "%04x:%06x:%06x:%s" of LID, QPN, PSN and the GID as 32 hex digits, sent with its
     * NUL (52 bytes; rdma-core libibverbs/examples/rc_pingpong.c).
     */
    private static final Pattern PINGPONG = Pattern.compile(
            "([0-9a-f]{4}):([0-9a-f]{6}):([0-9a-f]{6}):([0-9a-f]{32})\0");
    /**
     * perftest's message with a GID: "%04x:%04x:%06x:%06x:%08x:%016llx:" of LID, out_reads, QPN, PSN, rkey and VA,
     * then the 16 GID bytes as "%02x:" and the SRQ number "%08x" (108 bytes; perftest src/perftest_communication.c).
     */
    private static final Pattern PERFTEST = Pattern.compile("([0-9a-f]{4}):([0-9a-f]{4}):([0-9a-f]{6}):([0-9a-f]{6}):"
            + "([0-9a-f]{8}):([0-9a-f]{16}):((?:[0-9a-f]{2}:){16})([0-9a-f]{8})");

    private Capture(final String name, final List<ClassicPcap.IpPacket> all) {
        this.name = name;
        ClassicPcap.IpPacket firstSyn = null;
        for (final ClassicPcap.IpPacket p : all) {
            if (p.isTcp() && p.dstPort == EXCHANGE_PORT) {
                firstSyn = p;
                break;
            }
        }
        if (firstSyn == null) {
            throw new IllegalArgumentException(name + ": no TCP exchange on port " + EXCHANGE_PORT);
        }
        requester = firstSyn.src; // the client connects to the server's exchange port
        responder = firstSyn.dst;
        for (final ClassicPcap.IpPacket p : all) {
            if (p.isUdp() && p.dstPort == ROCE_V2_PORT) {
                roce.add(p);
            }
        }
        requesterDest = dest(stream(all, requester), name + " requester");
        responderDest = dest(stream(all, responder), name + " responder");
    }

    static Capture load(final String resource) throws IOException {
        try (InputStream in = Capture.class.getResourceAsStream("/replay/" + resource)) {
            if (in == null) {
                throw new IllegalArgumentException("no test resource /replay/" + resource);
            }
            return new Capture(resource, ClassicPcap.read(in, resource));
        }
    }

    boolean fromRequester(final ClassicPcap.IpPacket p) {
        return p.src.equals(requester);
    }

    /** The TCP bytes {@code from} sent on the exchange, in sequence order, each segment once. */
    private static String stream(final List<ClassicPcap.IpPacket> all, final Inet4Address from) {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final Set<Long> seen = new HashSet<>();
        for (final ClassicPcap.IpPacket p : all) {
            if (p.isTcp() && p.src.equals(from) && p.payload.length > 0 && seen.add(p.tcpSeq)) {
                out.write(p.payload, 0, p.payload.length);
            }
        }
        return new String(out.toByteArray(), StandardCharsets.ISO_8859_1);
    }

    private static Dest dest(final String text, final String what) {
        final Matcher pp = PINGPONG.matcher(text);
        if (pp.find()) {
            return new Dest(hex(pp.group(2)), hex(pp.group(3)), 0, 0, hexBytes(pp.group(4)));
        }
        final Matcher pt = PERFTEST.matcher(text);
        if (pt.find()) {
            return new Dest(hex(pt.group(3)), hex(pt.group(4)), (int) Long.parseLong(pt.group(5), 16),
                    Long.parseUnsignedLong(pt.group(6), 16), hexBytes(pt.group(7).replace(":", "")));
        }
        throw new IllegalArgumentException(what + ": neither an rc_pingpong nor a perftest message in the exchange");
    }

    private static int hex(final String s) {
        return Integer.parseInt(s, 16);
    }

    private static byte[] hexBytes(final String s) {
        final byte[] b = new byte[s.length() / 2];
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) Integer.parseInt(s.substring(2 * i, 2 * i + 2), 16);
        }
        return b;
    }
}
