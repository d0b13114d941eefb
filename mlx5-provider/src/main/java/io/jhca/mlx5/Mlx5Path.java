package io.jhca.mlx5;

import io.jhca.mlx5.cmd.Struct;
import io.jhca.mlx5.init.RoceGids;
import io.jhca.verbs.AhAttributes;

/**
 * The RoCEv2 address path of a QP ({@code ads}, qpc.primary_address_path) as the kernel's mlx5_ib
 * {@code mlx5_set_path} fills it for an Ethernet port: destination MAC, UDP source port (RC/UC, when the remote QPN is
 * given), eth_prio = SL & 7, DSCP = traffic class >> 2, then the GRH fields: source GID index, hop limit, traffic
 * class, flow label, destination GID; static rate 0 (port rate) and the port number. The UDP source port rule is
 * the kernel's and libibverbs': a 20-bit flow label (or, when 0, one folded from both QPNs, ib_verbs.h
 * {@code rdma_calc_flow_label}) mapped into 0xc000..0xffff ({@code rdma_flow_label_to_udp_sport}).
 */
public final class Mlx5Path {

    /** IB_ROCE_UDP_ENCAP_VALID_PORT_MIN. */
    public static final int UDP_SPORT_MIN = 0xc000;

    private Mlx5Path() {
    }

    /** ib_verbs.h / verbs.h {@code flow_label_to_udp_sport}: low 14 bits XOR bits 19:14, in 0xc000..0xffff. */
    public static int udpSportOfFlowLabel(int flowLabel) {
        int low = flowLabel & 0x3fff;
        int high = flowLabel & 0xfc000;
        low ^= high >>> 14;
        return low | UDP_SPORT_MIN;
    }

    /** ib_verbs.h {@code rdma_calc_flow_label}: the product of the QPNs folded to 20 bits (same at both ends). */
    public static int flowLabelOfQpns(int localQpn, int remoteQpn) {
        long v = (localQpn & 0xffffffL) * (remoteQpn & 0xffffffL);
        v ^= v >>> 20;
        v ^= v >>> 40;
        return (int) (v & 0xfffff);
    }

    /**
     * Writes the address path at {@code prefix} (e.g. {@code "qpc.primary_address_path."}) of a modify command.
     *
     * @param udpSport the UDP source port to set, or -1 to leave it (UD, or no remote QPN in this modify)
     */
    static void set(Struct in, String prefix, AhAttributes ah, int port, int udpSport) {
        long mac = 0;
        for (byte b : RoceGids.macOf(ah.dgid())) {
            mac = mac << 8 | (b & 0xff);
        }
        in.set(prefix + "rmac", mac);
        if (udpSport >= 0) {
            in.set(prefix + "udp_sport", udpSport);
        }
        in.set(prefix + "eth_prio", ah.sl() & 0x7);
        in.set(prefix + "dscp", ah.trafficClass() >>> 2);
        in.set(prefix + "src_addr_index", ah.sgidIndex());
        in.set(prefix + "hop_limit", ah.hopLimit());
        in.set(prefix + "tclass", ah.trafficClass());
        in.set(prefix + "flow_label", ah.flowLabel());
        in.setBytes(prefix + "rgid_rip", ah.dgid().bytes());
        in.set(prefix + "stat_rate", 0);
        in.set(prefix + "vhca_port_num", port);
    }
}
