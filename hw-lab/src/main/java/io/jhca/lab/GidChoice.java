package io.jhca.lab;

import io.jhca.verbs.Context;
import io.jhca.verbs.Gid;
import io.jhca.verbs.GidType;
import io.jhca.verbs.VerbsException;

import java.net.InetAddress;

/** Which GID of a port a tool uses, and the TCP address a server may listen on. */
public final class GidChoice {
    private GidChoice() {
    }

    /**
     * The GID index to use: {@code requested} if given (it must name a non-empty entry), else the first
     * IPv4-mapped entry (index 1 on an rxe device, as on Linux rxe), else the first non-empty one, RoCE v1 entries
     * (a port that lists both types) skipped, as perftest's "auto" GID choice prefers IPv4 RoCE v2
     * GIDs (perftest_communication.c get_best_gid_index).
     */
    public static int choose(Context ctx, int port, Integer requested) {
        int n = ctx.queryPort(port).gidTblLen();
        if (requested != null) {
            if (requested < 0 || requested >= n) {
                throw new VerbsException(VerbsException.EINVAL, "GID index " + requested + " out of range 0.." + (n - 1)
                        + " of " + ctx.name() + " port " + port);
            }
            if (ctx.queryGid(port, requested).isZero()) {
                throw new VerbsException(VerbsException.EINVAL, "GID index " + requested + " of " + ctx.name() + " port "
                        + port + " is empty");
            }
            return requested;
        }
        int firstNonZero = -1;
        for (int i = 0; i < n; i++) {
            Gid g = ctx.queryGid(port, i);
            if (g.isZero() || ctx.queryGidType(port, i) == GidType.ROCE_V1) {
                continue;
            }
            if (g.isIpv4Mapped()) {
                return i;
            }
            if (firstNonZero < 0) {
                firstNonZero = i;
            }
        }
        if (firstNonZero < 0) {
            throw new VerbsException(VerbsException.ENOENT, ctx.name() + " port " + port + " has no GID: RoCE needs one");
        }
        return firstNonZero;
    }

    /**
     * Where a two-process tool's TCP server listens: the explicit {@code bind} address if given, else every address
     * of the host (the wildcard), as ibv_rc_pingpong and perftest do (getaddrinfo with AI_PASSIVE), so that a peer on
     * another host can connect with the defaults.
     */
    public static InetAddress serverListenAddress(String bind) throws java.net.UnknownHostException {
        if (bind != null) {
            return InetAddress.getByName(bind);
        }
        return new java.net.InetSocketAddress(0).getAddress(); // the wildcard (IPv6 "::" where available, dual stack)
    }

    /**
     * Where an in-process run's internal exchange listens: the explicit {@code bind} address if given, else the GID's
     * IP address if that is a loopback address, else 127.0.0.1. Nothing outside the process needs to reach it.
     */
    public static InetAddress inProcessListenAddress(Gid local, String bind) throws java.net.UnknownHostException {
        if (bind != null) {
            return InetAddress.getByName(bind);
        }
        InetAddress ip = local.toInetAddress();
        return ip.isLoopbackAddress() ? ip : InetAddress.getByName("127.0.0.1");
    }
}
