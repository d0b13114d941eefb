package io.jhca.tests.wire;

import java.util.ArrayList;
import java.util.List;

/**
 * One RoCEv2 packet as tshark decodes it ({@code -T fields}, rocev2.md section 5): frame number, IP addresses,
 * IPv4 ID, and the BTH/AETH/RETH fields the assertions need. Absent fields are -1.
 */
record Packet(int frame, String src, String dst, int ipId, int opcode, int destQp, int psn, boolean ackReq, int padCnt,
              int syndrome, int msn, long dmaLen) {

    /** The tshark field names, in the order {@link #parse} expects them. */
    static final List<String> FIELDS = List.of("frame.number", "ip.src", "ip.dst", "ip.id", "infiniband.bth.opcode",
            "infiniband.bth.destqp", "infiniband.bth.psn", "infiniband.bth.a", "infiniband.bth.padcnt",
            "infiniband.aeth.syndrome", "infiniband.aeth.msn", "infiniband.reth.dmalen");

    /**
     * The tshark arguments that print {@link #FIELDS} tab-separated, first occurrence only, heuristics off, for every
     * packet but {@link Capture}'s probes.
     */
    static List<String> tsharkArgs(String tshark, String file) {
        List<String> cmd = new ArrayList<>(List.of(tshark, "-r", file, "--disable-heuristic", "rpcrdma_infiniband",
                "-Y", notFrom(Capture.PROBE_HOSTS),
                "-T", "fields", "-E", "separator=/t", "-E", "occurrence=f"));
        for (String f : FIELDS) {
            cmd.add("-e");
            cmd.add(f);
        }
        return cmd;
    }

    /** A display filter that leaves out every packet to or from one of {@code hosts}. */
    private static String notFrom(List<String> hosts) {
        StringBuilder f = new StringBuilder();
        for (String h : hosts) {
            f.append(f.length() == 0 ? "" : " && ").append("!(ip.addr == ").append(h).append(')');
        }
        return f.toString();
    }

    static Packet parse(String line) {
        String[] f = line.split("\t", -1);
        if (f.length < FIELDS.size()) {
            throw new IllegalArgumentException("tshark line with " + f.length + " fields: '" + line + "'");
        }
        return new Packet(num(f[0]), f[1], f[2], num(f[3]), num(f[4]), num(f[5]), num(f[6]), bool(f[7]), num(f[8]),
                num(f[9]), num(f[10]), lnum(f[11]));
    }

    private static int num(String s) {
        return (int) lnum(s);
    }

    private static long lnum(String s) {
        s = s.trim();
        if (s.isEmpty()) {
            return -1;
        }
        return s.startsWith("0x") ? Long.parseLong(s.substring(2), 16) : Long.parseLong(s);
    }

    private static boolean bool(String s) {
        s = s.trim();
        return s.equals("1") || s.equalsIgnoreCase("true");
    }

    @Override
    public String toString() {
        return String.format("#%d %s->%s id=%d op=%d dqp=0x%06x psn=0x%06x%s pad=%d%s%s%s", frame, src, dst, ipId, opcode,
                destQp, psn, ackReq ? " A" : "", padCnt, syndrome >= 0 ? " syn=0x" + Integer.toHexString(syndrome) : "",
                msn >= 0 ? " msn=" + msn : "", dmaLen >= 0 ? " len=" + dmaLen : "");
    }
}
