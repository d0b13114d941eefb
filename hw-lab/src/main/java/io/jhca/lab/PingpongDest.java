package io.jhca.lab;

import io.jhca.verbs.Gid;

import java.nio.charset.StandardCharsets;

/**
 * The address message of rdma-core's ibv_rc_pingpong TCP exchange (libibverbs/examples/rc_pingpong.c,
 * pp_client_exch_dest / pp_server_exch_dest): {@code "%04x:%06x:%06x:%s"} of LID, QPN, PSN and the GID as 32
 * lowercase hex digits in wire order (pingpong.c gid_to_wire_gid prints four big-endian 32-bit words), then a
 * NUL: exactly {@value #SIZE} bytes, {@code sizeof "0000:000000:000000:00000000000000000000000000000000"}.
 *
 * @param lid 16-bit LID (0 on RoCE)
 * @param qpn 24-bit QP number
 * @param psn 24-bit starting PSN
 * @param gid the GID (all zero when rc_pingpong runs without -g)
 */
public record PingpongDest(int lid, int qpn, int psn, Gid gid) {
    /** Bytes on the wire, NUL included. */
    public static final int SIZE = 52;

    /** What the client sends after reading the server's address; the server reads and checks 5 bytes. */
    public static final byte[] DONE = {'d', 'o', 'n', 'e', 0};

    public PingpongDest {
        check("LID", lid, 0xFFFF);
        check("QPN", qpn, 0xFFFFFF);
        check("PSN", psn, 0xFFFFFF);
        if (gid == null) {
            throw new IllegalArgumentException("GID is null (use Gid.ZERO)");
        }
    }

    /** The 51 characters before the NUL. */
    public String text() {
        return CFormat.pad(Integer.toHexString(lid), 4) + ':' + CFormat.pad(Integer.toHexString(qpn), 6) + ':'
                + CFormat.pad(Integer.toHexString(psn), 6) + ':' + gid.toHex();
    }

    /** The {@value #SIZE} bytes to send in one write. */
    public byte[] encode() {
        byte[] msg = new byte[SIZE];
        byte[] t = text().getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(t, 0, msg, 0, t.length); // t.length == 51, msg[51] stays NUL
        return msg;
    }

    /**
     * Parses a received message as rc_pingpong does ({@code sscanf(msg, "%x:%x:%x:%s")}), strictly: exactly
     * {@value #SIZE} bytes, NUL-terminated, three hex fields in range and 32 hex digits of GID.
     */
    public static PingpongDest decode(byte[] msg) {
        if (msg.length != SIZE) {
            throw new IllegalArgumentException("rc_pingpong address message must be " + SIZE + " bytes, got " + msg.length);
        }
        int nul = 0;
        while (nul < msg.length && msg[nul] != 0) {
            nul++;
        }
        if (nul == msg.length) {
            throw new IllegalArgumentException("rc_pingpong address message is not NUL-terminated");
        }
        String s = new String(msg, 0, nul, StandardCharsets.US_ASCII);
        String[] f = s.split(":", -1);
        if (f.length != 4) {
            throw new IllegalArgumentException("rc_pingpong address '" + s + "' is not LID:QPN:PSN:GID");
        }
        int lid = hex("LID", f[0], 0xFFFF);
        int qpn = hex("QPN", f[1], 0xFFFFFF);
        int psn = hex("PSN", f[2], 0xFFFFFF);
        if (f[3].length() != 32 || !isHex(f[3])) {
            throw new IllegalArgumentException("rc_pingpong address '" + s + "': GID must be 32 hex digits");
        }
        return new PingpongDest(lid, qpn, psn, Gid.parse(f[3]));
    }

    static int hex(String what, String field, long max) {
        if (field.isEmpty() || field.length() > 8 || !isHex(field)) {
            throw new IllegalArgumentException(what + " '" + field + "' is not a hex number");
        }
        long v = Long.parseLong(field, 16);
        if (v > max) {
            throw new IllegalArgumentException(what + " 0x" + field + " exceeds 0x" + Long.toHexString(max));
        }
        return (int) v;
    }

    static boolean isHex(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (Character.digit(s.charAt(i), 16) < 0) {
                return false;
            }
        }
        return true;
    }

    private static void check(String what, int v, int max) {
        if (v < 0 || v > max) {
            throw new IllegalArgumentException(what + " " + v + " out of range 0..0x" + Integer.toHexString(max));
        }
    }
}
