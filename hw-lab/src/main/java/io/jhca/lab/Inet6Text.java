package io.jhca.lab;

/**
 * Text of a 16-byte IPv6 address (a GID) as glibc's {@code inet_ntop(AF_INET6)} writes it, which is what
 * ibv_rc_pingpong prints after "GID" and ibv_devinfo -v prints for RoCE v2 GIDs: lowercase hex words without
 * leading zeros, the first longest run of two or more zero words as "::", and the last 32 bits in dotted-quad
 * form for IPv4-mapped ({@code ::ffff:a.b.c.d}) and IPv4-compatible ({@code ::a.b.c.d}) addresses.
 * Java's own {@code Inet6Address.getHostAddress()} neither compresses nor embeds IPv4, so it cannot be used.
 */
public final class Inet6Text {
    private Inet6Text() {
    }

    public static String format(byte[] a) {
        if (a.length != 16) {
            throw new IllegalArgumentException("an IPv6 address has 16 bytes, got " + a.length);
        }
        int[] w = new int[8];
        for (int i = 0; i < 8; i++) {
            w[i] = ((a[2 * i] & 0xff) << 8) | (a[2 * i + 1] & 0xff); // network (big-endian) order
        }
        // The first longest run of zero words, if it is at least two words long (RFC 5952 and glibc agree).
        int bestBase = -1;
        int bestLen = 0;
        for (int i = 0; i < 8; ) {
            if (w[i] != 0) {
                i++;
                continue;
            }
            int j = i;
            while (j < 8 && w[j] == 0) {
                j++;
            }
            if (j - i > bestLen) {
                bestBase = i;
                bestLen = j - i;
            }
            i = j;
        }
        if (bestLen < 2) {
            bestBase = -1;
            bestLen = 0;
        }
        StringBuilder sb = new StringBuilder(46);
        for (int i = 0; i < 8; i++) {
            if (bestBase >= 0 && i >= bestBase && i < bestBase + bestLen) {
                if (i == bestBase) {
                    sb.append(':');
                }
                continue;
            }
            if (i != 0) {
                sb.append(':');
            }
            // glibc embeds IPv4 for ::a.b.c.d (6 zero words), ::ffff:a.b.c.d and ::0:a.b.c.d with a word 7 other than 1
            if (i == 6 && bestBase == 0
                    && (bestLen == 6 || (bestLen == 7 && w[7] != 0x0001) || (bestLen == 5 && w[5] == 0xffff))) {
                sb.append(a[12] & 0xff).append('.').append(a[13] & 0xff).append('.')
                        .append(a[14] & 0xff).append('.').append(a[15] & 0xff);
                return sb.toString();
            }
            sb.append(Integer.toHexString(w[i]));
        }
        if (bestBase >= 0 && bestBase + bestLen == 8) {
            sb.append(':');
        }
        return sb.toString();
    }
}
