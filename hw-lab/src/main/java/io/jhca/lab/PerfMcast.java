package io.jhca.lab;

import io.jhca.verbs.Gid;
import io.jhca.verbs.VerbsException;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * perftest's multicast mode ({@code --mcg}, {@code -M}): UD only, one QP; the server attaches its QP to the group
 * and sends the MGID as its GID and QPN 0xFFFFFF in its key message; the client reads the group from those keys
 * and SENDs to it (send_bw.c send_set_up_connection; multicast_resources.{c,h}).
 */
final class PerfMcast {
    /** multicast_resources.h MCG_GID: ff01:0:2:c985::, the group when no -M is given. */
    static final byte[] MCG_GID = {(byte) 255, 1, 0, 0, 0, 2, (byte) 201, (byte) 133, 0, 0, 0, 0, 0, 0, 0, 0};
    /** multicast_resources.h DEF_QKEY: the Q_Key of every UD QP of perftest. */
    static final int DEF_QKEY = 0x11111111;
    /** perftest_parameters.h UD_ADDITION: the GRH that heads every UD receive buffer. */
    static final int UD_ADDITION = 40;
    /** perftest_parameters.h MAX_INLINE_UD. */
    static final int MAX_INLINE_UD = 1024;

    private PerfMcast() {
    }

    /**
     * The group of a run (set_multicast_gid): -M's, else MCG_GID, whose last byte the client increments (a send-lat
     * client attaches to a group of its own; a send-bw client attaches to none and sends to the server's).
     */
    static Gid mgid(String user, boolean client) {
        if (user != null) {
            return parse(user);
        }
        byte[] g = MCG_GID.clone();
        if (client) {
            g[15]++;
        }
        return Gid.of(g);
    }

    /**
     * Parses -M as perftest does: 16 byte values separated by ':', each a C integer (strtoll base 0: decimal,
     * 0x hex, 0 octal), e.g. {@code 0:0:0:0:0:0:0:0:0:0:255:255:239:1:1:1}. jhca also takes an IPv6 address
     * ({@code ff0e::1}) or an IPv4 group ({@code 239.1.1.1}, IPv4-mapped). The result must be a multicast GID.
     */
    static Gid parse(String text) {
        if (text == null || text.isEmpty()) {
            throw new VerbsException(VerbsException.EINVAL, "-M/--MGID is empty");
        }
        String[] f = text.split(":", -1);
        Gid g;
        if (f.length == 16 && allIntegers(f)) {
            byte[] b = new byte[16];
            for (int i = 0; i < 16; i++) {
                long v = cInteger(f[i]);
                if (v < 0 || v > 255) {
                    throw new VerbsException(VerbsException.EINVAL, "-M/--MGID '" + text + "': byte " + i + " ('" + f[i]
                            + "') is not 0..255");
                }
                b[i] = (byte) v;
            }
            g = Gid.of(b);
        } else {
            g = address(text);
        }
        if (!isMulticast(g)) {
            throw new VerbsException(VerbsException.EINVAL, "-M/--MGID '" + text + "' (" + Inet6Text.format(g.bytes())
                    + ") is not a multicast GID (ff00::/8, or an IPv4-mapped 224.0.0.0/4)");
        }
        return g;
    }

    /** An IPv6 group (ff00::/8) or an IPv4-mapped one (::ffff:224.0.0.0/100). */
    static boolean isMulticast(Gid g) {
        if (g.isIpv4Mapped()) {
            return (g.get(12) & 0xF0) == 0xE0;
        }
        return (g.get(0) & 0xFF) == 0xFF;
    }

    private static Gid address(String text) {
        if (!text.matches("[0-9A-Fa-f:.]+")) {
            throw new VerbsException(VerbsException.EINVAL, "-M/--MGID '" + text + "' is neither 16 ':'-separated byte"
                    + " values (perftest's form) nor an IP address");
        }
        try {
            InetAddress a = InetAddress.getByName(text); // a literal only: the characters allow no host name
            return Gid.of(a);
        } catch (UnknownHostException | RuntimeException e) {
            throw new VerbsException(VerbsException.EINVAL, "-M/--MGID '" + text + "' is neither 16 ':'-separated byte"
                    + " values (perftest's form) nor an IP address (" + e.getMessage() + ")");
        }
    }

    private static boolean allIntegers(String[] f) {
        for (String s : f) {
            if (!s.matches("0[xX][0-9a-fA-F]+|[0-9]+")) {
                return false;
            }
        }
        return true;
    }

    /** strtoll(s, NULL, 0) for what {@link #allIntegers} admits. */
    private static long cInteger(String s) {
        if (s.startsWith("0x") || s.startsWith("0X")) {
            return s.length() > 10 ? -1 : Long.parseLong(s.substring(2), 16);
        }
        if (s.length() > 10) {
            return -1;
        }
        if (s.length() > 1 && s.charAt(0) == '0') {
            if (!s.matches("[0-7]+")) {
                throw new VerbsException(VerbsException.EINVAL, "-M/--MGID byte '" + s + "' is not an octal number"
                        + " (a leading 0 makes it octal, as in C)");
            }
            return Long.parseLong(s, 8);
        }
        return Long.parseLong(s);
    }
}
