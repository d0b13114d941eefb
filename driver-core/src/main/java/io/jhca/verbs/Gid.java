package io.jhca.verbs;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.Arrays;

/**
 * A 16-byte global identifier in wire (network) order. On RoCEv2 a GID is an IP address:
 * IPv4 as the IPv4-mapped IPv6 address {@code ::ffff:a.b.c.d}, as Linux rxe fills its GID table.
 */
public final class Gid {
    public static final int LENGTH = 16;
    public static final Gid ZERO = new Gid(new byte[LENGTH]);

    private final byte[] raw;

    private Gid(byte[] raw) {
        this.raw = raw;
    }

    /** A GID from 16 bytes in wire order (copied). */
    public static Gid of(byte[] bytes) {
        if (bytes.length != LENGTH) {
            throw new IllegalArgumentException("a GID has 16 bytes, got " + bytes.length);
        }
        return new Gid(bytes.clone());
    }

    /** The RoCEv2 GID of an IP address (IPv4 becomes ::ffff:a.b.c.d). */
    public static Gid of(InetAddress address) {
        byte[] g = new byte[LENGTH];
        byte[] a = address.getAddress();
        if (a.length == 4) {
            g[10] = (byte) 0xff;
            g[11] = (byte) 0xff;
            System.arraycopy(a, 0, g, 12, 4);
        } else {
            System.arraycopy(a, 0, g, 0, LENGTH);
        }
        return new Gid(g);
    }

    /** Parses 32 hex digits (rc_pingpong's wire form) or ibv_devinfo's "fe80:0000:...:0001" form. */
    public static Gid parse(String text) {
        String hex = text.replace(":", "");
        if (hex.length() != 32) {
            throw new IllegalArgumentException("not a GID: '" + text + "'");
        }
        byte[] g = new byte[LENGTH];
        for (int i = 0; i < LENGTH; i++) {
            g[i] = (byte) Integer.parseInt(hex.substring(2 * i, 2 * i + 2), 16);
        }
        return new Gid(g);
    }

    public byte[] bytes() {
        return raw.clone();
    }

    public byte get(int i) {
        return raw[i];
    }

    public boolean isZero() {
        for (byte b : raw) {
            if (b != 0) {
                return false;
            }
        }
        return true;
    }

    /** True for {@code ::ffff:a.b.c.d}, which RoCEv2 sends over IPv4. */
    public boolean isIpv4Mapped() {
        for (int i = 0; i < 10; i++) {
            if (raw[i] != 0) {
                return false;
            }
        }
        return raw[10] == (byte) 0xff && raw[11] == (byte) 0xff;
    }

    /**
     * True for a multicast GID: on RoCEv2 {@code ::ffff:224.0.0.0/100} (an IPv4 multicast group) or an IPv6
     * address {@code ff00::/8}, which is also the IB multicast GID prefix (rdma_is_multicast_addr, ib_addr.h).
     */
    public boolean isMulticast() {
        if (isIpv4Mapped()) {
            return (raw[12] & 0xF0) == 0xE0;
        }
        return raw[0] == (byte) 0xff;
    }

    /** The IP address this GID stands for on RoCEv2 (rdma_gid2ip). */
    public InetAddress toInetAddress() {
        try {
            if (isIpv4Mapped()) {
                return Inet4Address.getByAddress(Arrays.copyOfRange(raw, 12, 16));
            }
            return Inet6Address.getByAddress(null, raw.clone(), null);
        } catch (UnknownHostException e) {
            throw new AssertionError(e);
        }
    }

    /** 32 lowercase hex digits, as ibv_rc_pingpong writes a GID on its TCP exchange. */
    public String toHex() {
        StringBuilder sb = new StringBuilder(32);
        for (byte b : raw) {
            sb.append(Character.forDigit((b >> 4) & 0xf, 16)).append(Character.forDigit(b & 0xf, 16));
        }
        return sb.toString();
    }

    /** ibv_devinfo -v's form: eight groups of four hex digits. */
    @Override
    public String toString() {
        String h = toHex();
        StringBuilder sb = new StringBuilder(39);
        for (int i = 0; i < 8; i++) {
            sb.append(i == 0 ? "" : ":").append(h, 4 * i, 4 * i + 4);
        }
        return sb.toString();
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Gid && Arrays.equals(raw, ((Gid) o).raw);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(raw);
    }
}
