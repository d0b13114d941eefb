package io.jhca.rxe.link;

import java.net.InetSocketAddress;

/**
 * The senders a link made socket addresses for lately, so that a datagram from one of them allocates nothing: a few
 * entries keyed by address family, address (IPv4 in {@code lo}, IPv6 in {@code hi:lo}), port and scope id, the last
 * hit looked at first (a ping-pong has one sender), evicted in turn. Engine thread only.
 */
final class SenderCache {

    private static final int SIZE = 8;

    private final long[] keyHi = new long[SIZE];
    private final long[] keyLo = new long[SIZE];
    private final int[] keyPort = new int[SIZE];
    private final int[] keyScope = new int[SIZE];
    private final int[] keyFamily = new int[SIZE];
    private final InetSocketAddress[] senders = new InetSocketAddress[SIZE];
    private int nextEvict;
    private int last;

    /** The socket address cached for this sender, or null. */
    InetSocketAddress find(final int family, final long hi, final long lo, final int port, final int scope) {
        int i = last;
        for (int k = 0; k < SIZE; k++) {
            if (senders[i] != null && keyLo[i] == lo && keyHi[i] == hi && keyPort[i] == port && keyScope[i] == scope
                    && keyFamily[i] == family) {
                last = i;
                return senders[i];
            }
            i = i + 1 == SIZE ? 0 : i + 1;
        }
        return null;
    }

    /** Caches {@code made} for this sender in place of the oldest entry; returns it. */
    InetSocketAddress add(final int family, final long hi, final long lo, final int port, final int scope,
            final InetSocketAddress made) {
        final int i = nextEvict;
        nextEvict = i + 1 == SIZE ? 0 : i + 1;
        keyHi[i] = hi;
        keyLo[i] = lo;
        keyPort[i] = port;
        keyScope[i] = scope;
        keyFamily[i] = family;
        senders[i] = made;
        last = i;
        return made;
    }
}
