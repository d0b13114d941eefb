package io.jhca.mlx5;

import io.jhca.mlx5.init.HcaCaps;
import io.jhca.mlx5.init.RoceGids;
import io.jhca.verbs.DeviceAttributes;
import io.jhca.verbs.LinkLayer;
import io.jhca.verbs.Mtu;
import io.jhca.verbs.PortAttributes;
import io.jhca.verbs.PortState;

/**
 * What ibv_query_device and ibv_query_port report for an mlx5 function, from the capabilities it returned, as the
 * kernel's mlx5_ib_query_device / mlx5_query_hca_port derive them: the limits are powers of two of the log2 caps
 * (max_qp = 1 << log_max_qp, max_qp_wr = 1 << log_max_qp_sz, max_cqe = (1 << log_max_cq_sz) - 1, max_qp_rd_atom =
 * 1 << log_max_ra_res_qp, max_qp_init_rd_atom = 1 << log_max_ra_req_qp, max_pkeys = 128 << pkey_table_size), the
 * MR size unlimited (~0ull), the page sizes those of 2^log_pg_sz and up.
 *
 * <p>What the caps do not say is fixed here: the WQE budget ({@link #MAX_SGE} gather entries, {@link #MAX_INLINE}
 * inline bytes in WQEs of at most 63 DS), vendor id 0x02c9 (Mellanox), and the port's active MTU 1024 (an Ethernet
 * netdev of 1500 bytes, as rxe derives it). No PCI ids or board id: the function does not expose them.
 */
final class Mlx5Attributes {

    /** IEEE OUI of Mellanox, what ibv_devinfo shows as vendor_id for ConnectX. */
    static final int VENDOR_ID = 0x02c9;
    /** Gather/scatter entries per WQE (the kernel's min(max_rq_sg, max_sq_sg) for 512-byte RQ WQEs). */
    static final int MAX_SGE = 32;
    /** mlx5_ib MLX5_MAX_SGE_RD: (512 - 16 - 16) / 16. */
    static final int MAX_SGE_RD = 30;
    /** Inline bytes a WQE may carry (fits every QP type in 63 DS). */
    static final int MAX_INLINE = 512;
    /** The longest send WQE: 63 DS of 16 bytes (the control segment's DS field is 6 bits). */
    static final int MAX_SEND_WQE = 63 * 16;
    /**
     * SGEs of an SRQ WQE: the longest receive WQE less its 16-byte next segment (mlx5_ib_query_device: max_srq_sge =
     * max_wqe_sz_rq / sizeof(mlx5_wqe_data_seg) - 1; max_srq_wr = 2^log_max_srq_sz - 1).
     */
    static final int MAX_SRQ_SGE = 512 / 16 - 1;
    /** The longest receive WQE (max_wqe_sz_rq of ConnectX-4 and later). */
    static final int MAX_RECV_WQE = 512;
    /** verbs.h IBV_DEVICE_SYS_IMAGE_GUID | IBV_DEVICE_RC_RNR_NAK_GEN | IBV_DEVICE_PORT_ACTIVE_EVENT. */
    static final long DEVICE_CAP_FLAGS = (1L << 11) | (1L << 12) | (1L << 8);
    /** mlx5_ib_query_device with imaicl: MEM_WINDOW | MEM_WINDOW_TYPE_2B. */
    static final long MW_CAP_FLAGS = DeviceAttributes.CAP_MEM_WINDOW | DeviceAttributes.CAP_MEM_WINDOW_TYPE_2B;
    /** ib_verbs.h IB_PORT_CM_SUP | IB_PORT_IP_BASED_GIDS, as the RoCE core sets for an Ethernet port. */
    static final int PORT_CAP_FLAGS = (1 << 16) | (1 << 26);

    private Mlx5Attributes() {
    }

    static DeviceAttributes device(HcaCaps c, RoceGids gids, String fwVersion, int vendorPartId) {
        int maxQp = pow2(c.logMaxQp());
        int maxQpRdAtom = pow2(c.logMaxRaReqQp());
        return new DeviceAttributes(fwVersion, gids.nodeGuid(), gids.nodeGuid(), Long.MAX_VALUE,
                -(1L << Math.max(12, c.logPgSz())), VENDOR_ID, vendorPartId, 0, "", maxQp, pow2(c.logMaxQpSz()),
                DEVICE_CAP_FLAGS | (c.memoryWindows() ? MW_CAP_FLAGS : 0),
                MAX_SGE, MAX_SGE_RD, pow2(c.logMaxCq()), pow2(c.logMaxCqSz()) - 1, pow2(c.logMaxMkey()),
                pow2(c.logMaxPd()), maxQpRdAtom, pow2(c.logMaxRaResQp()), (int) Math.min(Integer.MAX_VALUE,
                (long) maxQpRdAtom * maxQp), c.atomic() ? DeviceAttributes.ATOMIC_HCA : 0, Integer.MAX_VALUE,
                128 << Math.min(c.pkeyTableSize(), 8), c.localCaAckDelay(), Math.max(1, c.numPorts()), MAX_INLINE,
                c.memoryWindows() ? pow2(c.logMaxMkey()) : 0,
                c.logMaxSrqSz() == 0 ? 0 : pow2(c.logMaxSrq()), c.logMaxSrqSz() == 0 ? 0 : pow2(c.logMaxSrqSz()) - 1,
                MAX_SRQ_SGE, 0, 0, 0)
                // mlx5_ib_query_device: max_mcast_grp = 2^log_max_mcg, max_mcast_qp_attach = max_qp_mcg, total their product
                .withMulticast(pow2(c.logMaxMcg()), c.maxQpMcg(),
                        (int) Math.min(Integer.MAX_VALUE, (long) pow2(c.logMaxMcg()) * c.maxQpMcg()));
    }

    static PortAttributes port(HcaCaps c, RoceGids gids) {
        int encoded = c.gidTableSize();
        int gidTblLen = Math.max(encoded > 4 ? 0 : 8 << encoded, gids.size());
        return new PortAttributes(PortState.ACTIVE, Mtu.MTU_4096, Mtu.MTU_1024, gidTblLen, PORT_CAP_FLAGS,
                1L << Math.min(c.logMaxMsg(), 62), 0, 0, 0, 1, 1, 5,
                c.isEthernet() ? LinkLayer.ETHERNET : LinkLayer.INFINIBAND);
    }

    private static int pow2(int log) {
        return log >= 31 ? Integer.MAX_VALUE : 1 << log;
    }
}
