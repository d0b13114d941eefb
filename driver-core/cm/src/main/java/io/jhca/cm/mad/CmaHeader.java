package io.jhca.cm.mad;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;

/**
 * The header rdma_cm puts in front of a REQ's private data so that the passive side learns the IP addresses and
 * the source port (Linux drivers/infiniband/core/cma.c struct cma_hdr, CMA_VERSION 0x00): cma_version (1 byte),
 * ip_version in the high nibble (1), source port (2, big endian), source address (16), destination address (16).
 * An IPv4 address takes the last 4 of its 16 bytes, the first 12 are zero. The destination port is in the service
 * ID ({@link #serviceId}).
 */
public record CmaHeader(InetSocketAddress source, InetSocketAddress destination) {
    public static final int SIZE = 36;
    public static final int VERSION = 0x00;
    /** rdma_cm's TCP port space (enum rdma_ucm_port_space RDMA_PS_TCP); the service ID is 0x01060000 | port. */
    public static final int PS_TCP = 0x0106;
    /** The user's share of a REQ's private data once the header is in (92 - 36). */
    public static final int REQ_USER_PRIVATE_DATA = CmMessages.Req.PRIVATE_DATA_SIZE - SIZE;

    /** RDMA_PS_TCP's service ID for a port (cma.c cma_get_service_id: ps << 16 | port). */
    public static long serviceId(int port) {
        return ((long) PS_TCP << 16) | (port & 0xFFFF);
    }

    /** The port of a TCP port space service ID, or -1 if it is of another space. */
    public static int portOf(long serviceId) {
        return (serviceId >>> 16) == PS_TCP ? (int) (serviceId & 0xFFFF) : -1;
    }

    public byte[] encode() {
        byte[] b = new byte[SIZE];
        boolean v4 = source.getAddress() instanceof Inet4Address;
        if (v4 != destination.getAddress() instanceof Inet4Address) {
            throw new IllegalArgumentException("cma header: source and destination of different IP versions");
        }
        b[0] = VERSION;
        b[1] = (byte) ((v4 ? 4 : 6) << 4);
        b[2] = (byte) (source.getPort() >> 8);
        b[3] = (byte) source.getPort();
        putAddress(b, 4, source.getAddress());
        putAddress(b, 20, destination.getAddress());
        return b;
    }

    private static void putAddress(byte[] b, int at, InetAddress a) {
        byte[] raw = a.getAddress();
        System.arraycopy(raw, 0, b, at + 16 - raw.length, raw.length);
    }

    /** Decodes the header at the start of a REQ's private data; the destination port comes from the service ID. */
    public static CmaHeader decode(byte[] privateData, int destinationPort) {
        if (privateData.length < SIZE) {
            throw new IllegalArgumentException("cma header: " + privateData.length + " bytes, needs " + SIZE);
        }
        if (privateData[0] != VERSION) {
            throw new IllegalArgumentException("cma header: version " + (privateData[0] & 0xFF) + ", expected 0");
        }
        int ipVersion = (privateData[1] & 0xFF) >> 4;
        if (ipVersion != 4 && ipVersion != 6) {
            throw new IllegalArgumentException("cma header: IP version " + ipVersion);
        }
        int port = ((privateData[2] & 0xFF) << 8) | (privateData[3] & 0xFF);
        return new CmaHeader(new InetSocketAddress(address(privateData, 4, ipVersion), port),
                new InetSocketAddress(address(privateData, 20, ipVersion), destinationPort));
    }

    private static InetAddress address(byte[] b, int at, int version) {
        try {
            if (version == 4) {
                return InetAddress.getByAddress(java.util.Arrays.copyOfRange(b, at + 12, at + 16));
            }
            return Inet6Address.getByAddress(null, java.util.Arrays.copyOfRange(b, at, at + 16), null);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e);
        }
    }
}
