package io.jhca.rxe;

import java.net.Inet4Address;
import java.net.InetAddress;

import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.Gid;
import io.jhca.verbs.LinkLayer;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.PortState;

/**
 * What an rxe device reports, with Linux rxe's values (rxe_param.h, rxe.c rxe_init_device_param and
 * rxe_init_port_param) and identity derived from the device's IP address the way rxe derives it from its netdev:
 * a MAC (here a locally administered one made from the IP, since a UDP socket has none), the node GUID as the
 * EUI-64 of that MAC, and the GID table index 0 = fe80::EUI-64 (the IPv6 link-local address), index 1 = the
 * device address (IPv4-mapped for IPv4). A device on a network interface takes the interface's MAC and Linux's GID
 * table over its addresses ({@link RxeGidTable}).
 */
public final class RxeDeviceAttributes {

    /** rxe_param.h DEFAULT_MAX_VALUE. */
    static final int DEFAULT_MAX_VALUE = 1 << 20;
    /** rxe_param.h RXE_VENDOR_ID (IBTA A3.3.1: no vendor). */
    static final int VENDOR_ID = 0xFFFFFF;
    /** rxe_param.h RXE_PAGE_SIZE_CAP. */
    static final long PAGE_SIZE_CAP = 0xFFFFF000L;
    /** rxe_param.h RXE_MAX_SGE, RXE_MAX_SGE_RD. */
    static final int MAX_SGE = 32;
    /** rxe_param.h RXE_MAX_LOG_CQE 15: max_cqe = 2^15 - 1. */
    static final int MAX_CQE = (1 << 15) - 1;
    /** rxe_param.h RXE_MAX_QP_RD_ATOM, RXE_MAX_QP_INIT_RD_ATOM. */
    static final int MAX_QP_RD_ATOM = 128;
    /** rxe_param.h RXE_MAX_RES_RD_ATOM 0x3f000. */
    static final int MAX_RES_RD_ATOM = 0x3F000;
    /** rxe_param.h RXE_MAX_PKEYS. */
    static final int MAX_PKEYS = 64;
    /** rxe_param.h RXE_LOCAL_CA_ACK_DELAY. */
    static final int LOCAL_CA_ACK_DELAY = 15;
    /** rxe_param.h RXE_MAX_INLINE_DATA (older kernels; rocev2.md §3.6). */
    static final int MAX_INLINE_DATA = 400;
    /** rxe_param.h RXE_MAX_SRQ: RXE_MAX_SRQ_INDEX (DEFAULT_MAX_VALUE) - RXE_MIN_SRQ_INDEX 0x20001. */
    static final int MAX_SRQ = DEFAULT_MAX_VALUE - 0x20001;
    /** rxe_param.h RXE_MAX_SRQ_SGE. */
    static final int MAX_SRQ_SGE = 27;
    /** rxe_param.h RXE_MIN_QP_INDEX 16: the first QPN handed out is 0x11 (as seen in rxe tool output). */
    static final int FIRST_QPN = 0x11;
    /** rxe_param.h RXE_PORT_GID_TBL_LEN. */
    static final int GID_TBL_LEN = 1024;
    /** rxe_param.h RXE_MAX_HDR_LENGTH: netdev MTU minus this bounds the port MTU (eth_mtu_int_to_enum). */
    static final int MAX_HDR_LENGTH = 80;
    /**
     * Largest message: rxe advertises RXE_PORT_MAX_MSG_SZ 8 MiB, this transport streams messages of up to 1 GiB by
     * path MTU and says so.
     */
    static final long MAX_MSG_SZ = 1L << 30;
    /** ib_verbs.h IB_PORT_CM_SUP | IB_PORT_IP_BASED_GIDS (set by the RoCE core for rxe's port). */
    static final int PORT_CAP_FLAGS = (1 << 16) | (1 << 26);
    /** verbs.h IBV_DEVICE_*: BAD_PKEY_CNTR | BAD_QKEY_CNTR | SYS_IMAGE_GUID | RC_RNR_NAK_GEN, what this one does. */
    static final long DEVICE_CAP_FLAGS = (1 << 1) | (1 << 2) | (1 << 11) | (1 << 12)
            | DeviceAttributes.CAP_MEM_WINDOW | DeviceAttributes.CAP_MEM_WINDOW_TYPE_2B; // rxe.h RXE_DEVICE_CAP_FLAGS
    /** rxe_param.h RXE_MAX_MW (DEFAULT_MAX_VALUE since Linux 6.2). */
    static final int MAX_MW = DEFAULT_MAX_VALUE;

    private final byte[] mac;
    private final long nodeGuid;
    private final RxeGidTable gids;
    private final DeviceAttributes device;
    private final PortAttributes port;

    RxeDeviceAttributes(final InetAddress address, final int netdevMtu) {
        this(macOf(address), RxeGidTable.single(guidOf(macOf(address)), address), netdevMtu, MAX_SRQ_SGE);
    }

    /** A device with this MAC (its node GUID is the MAC's EUI-64), GID table and max_srq_sge. */
    RxeDeviceAttributes(final byte[] mac, final RxeGidTable gids, final int netdevMtu, final int maxSrqSge) {
        this.mac = mac.clone();
        this.nodeGuid = guidOf(mac);
        this.gids = gids;
        this.device = new DeviceAttributes("0.0.0", nodeGuid, nodeGuid, Long.MAX_VALUE /* rxe: -1ull */, PAGE_SIZE_CAP,
                VENDOR_ID, 0, 0, "", DEFAULT_MAX_VALUE - 16, DEFAULT_MAX_VALUE, DEVICE_CAP_FLAGS, MAX_SGE, MAX_SGE,
                DEFAULT_MAX_VALUE, MAX_CQE, DEFAULT_MAX_VALUE - 1, DEFAULT_MAX_VALUE, MAX_QP_RD_ATOM, MAX_QP_RD_ATOM,
                MAX_RES_RD_ATOM, DeviceAttributes.ATOMIC_HCA, DEFAULT_MAX_VALUE, MAX_PKEYS, LOCAL_CA_ACK_DELAY, 1,
                MAX_INLINE_DATA, MAX_MW, MAX_SRQ, DEFAULT_MAX_VALUE, maxSrqSge, 0, 0, 0)
                .withMulticast(io.jhca.rxe.transport.Engine.MAX_MCAST_GROUPS,
                io.jhca.rxe.transport.Engine.MAX_MCAST_QP_ATTACH, io.jhca.rxe.transport.Engine.MAX_TOTAL_MCAST_QP_ATTACH);
        final Mtu active = activeMtu(netdevMtu);
        // width 1X, speed 1 (rxe_param.h RXE_PORT_ACTIVE_SPEED), phys state 5 = LinkUp
        this.port = new PortAttributes(PortState.ACTIVE, Mtu.MTU_4096, active, GID_TBL_LEN, PORT_CAP_FLAGS,
                MAX_MSG_SZ, 0, 0, 0, 1, 1, 5, LinkLayer.ETHERNET);
    }

    /** rxe_param.h eth_mtu_int_to_enum: the largest IB MTU within the netdev MTU minus 80, at most 4096. */
    static Mtu activeMtu(final int netdevMtu) {
        return Mtu.largestNotAbove(netdevMtu - MAX_HDR_LENGTH);
    }

    /** A locally administered unicast MAC made from the IP: 02:00:a.b.c.d for IPv4, 02 + the last 5 bytes for IPv6. */
    static byte[] macOf(final InetAddress address) {
        final byte[] ip = address.getAddress();
        final byte[] m = new byte[6];
        m[0] = 0x02;
        if (address instanceof Inet4Address) {
            System.arraycopy(ip, 0, m, 2, 4);
        } else {
            System.arraycopy(ip, 11, m, 1, 5);
        }
        return m;
    }

    /** EUI-64 of a MAC (addrconf_addr_eui48): flip the universal/local bit, insert ff:fe in the middle. */
    static long guidOf(final byte[] mac) {
        final byte[] e = {(byte) (mac[0] ^ 0x02), mac[1], mac[2], (byte) 0xFF, (byte) 0xFE, mac[3], mac[4], mac[5]};
        long v = 0;
        for (final byte b : e) {
            v = v << 8 | (b & 0xFF); // big-endian: the GUID as printed (%016llx of be64_to_cpu)
        }
        return v;
    }

    static Gid linkLocalGid(final long guid) {
        final byte[] g = new byte[Gid.LENGTH];
        g[0] = (byte) 0xFE;
        g[1] = (byte) 0x80;
        for (int i = 0; i < 8; i++) {
            g[8 + i] = (byte) (guid >>> (56 - 8 * i));
        }
        return Gid.of(g);
    }

    public DeviceAttributes device() {
        return device;
    }

    public PortAttributes port() {
        return port;
    }

    public long nodeGuid() {
        return nodeGuid;
    }

    /** The MAC the identity was derived from (a copy). */
    public byte[] mac() {
        return mac.clone();
    }

    /** GID table entry; {@link Gid#ZERO} beyond the filled ones. */
    public Gid gid(final int index) {
        return gids.gid(index);
    }

    /** The port's GID table with each entry's type and source address. */
    public RxeGidTable gidTable() {
        return gids;
    }
}
