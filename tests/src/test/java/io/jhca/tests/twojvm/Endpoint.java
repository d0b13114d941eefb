package io.jhca.tests.twojvm;

import io.jhca.verbs.Gid;

/**
 * What each JVM tells the other over TCP before RDMA traffic: one line {@code "EP <qpn> <psn> <gid hex> <rkey> <addr>"},
 * numbers in hex; the GID as rc_pingpong writes it (32 hex digits in wire order).
 */
record Endpoint(int qpn, int psn, Gid gid, int rkey, long addr) {

    String line() {
        return "EP " + Integer.toHexString(qpn) + " " + Integer.toHexString(psn) + " " + gid.toHex() + " "
                + Integer.toHexString(rkey) + " " + Long.toHexString(addr);
    }

    static Endpoint parse(String line) {
        if (line == null) {
            throw new IllegalStateException("the peer closed the connection before sending its endpoint");
        }
        String[] f = line.trim().split(" ");
        if (f.length != 6 || !f[0].equals("EP")) {
            throw new IllegalStateException("not an endpoint line: '" + line + "'");
        }
        return new Endpoint(Integer.parseUnsignedInt(f[1], 16), Integer.parseUnsignedInt(f[2], 16), Gid.parse(f[3]),
                Integer.parseUnsignedInt(f[4], 16), Long.parseUnsignedLong(f[5], 16));
    }
}
