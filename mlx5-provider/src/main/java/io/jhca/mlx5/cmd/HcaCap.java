package io.jhca.mlx5.cmd;

/**
 * {@code cmd_hca_cap} (256 bytes), the general device capabilities returned by QUERY_HCA_CAP with cap type 0 and
 * accepted by SET_HCA_CAP. Only the fields a verbs driver uses; positions from mlx5_ifc.h
 * {@code struct mlx5_ifc_cmd_hca_cap_bits} (bit offset, width). The verbs limits are logarithms: max_qp =
 * 1 << log_max_qp, max_qp_wr = 1 << log_max_qp_sz, max_qp_rd_atom = 1 << log_max_ra_req_qp, max_qp_init_rd_atom =
 * 1 << log_max_ra_res_qp (the kernel's mlx5_ib_query_device mapping).
 */
public final class HcaCap {

    /** QUERY_HCA_CAP op_mod = (cap_type << 1) | mode (device.h: HCA_CAP_OPMOD_GET_MAX 0, _CUR 1). */
    public static final int MODE_MAX = 0;
    public static final int MODE_CURRENT = 1;
    /** device.h {@code enum mlx5_cap_type}: MLX5_CAP_GENERAL 0, ETHERNET_OFFLOADS 1, ODP 2, ATOMIC 3, ROCE 4. */
    public static final int TYPE_GENERAL = 0;
    public static final int TYPE_ETHERNET_OFFLOADS = 1;
    public static final int TYPE_ODP = 2;
    public static final int TYPE_ATOMIC = 3;
    public static final int TYPE_ROCE = 4;

    /** port_type: mlx5_ifc {@code MLX5_CAP_PORT_TYPE_IB 0, _ETH 1}. */
    public static final int PORT_TYPE_IB = 0;
    public static final int PORT_TYPE_ETH = 1;

    public static final Layout CMD_HCA_CAP = Layout.struct("cmd_hca_cap", 0x100)
            .field("vhca_id", 0x030, 16)
            .field("log_max_srq_sz", 0x080, 8)
            .field("log_max_qp_sz", 0x088, 8)
            .field("log_max_qp", 0x09b, 5)
            .field("log_max_srq", 0x0ab, 5)
            .field("log_max_cq_sz", 0x0c8, 8)
            .field("log_max_cq", 0x0db, 5)
            .field("log_max_eq_sz", 0x0e0, 8)
            .field("log_max_mkey", 0x0ea, 6)
            .field("fast_teardown", 0x0fb, 1)
            .field("log_max_eq", 0x0fc, 4)
            .field("log_max_mrw_sz", 0x109, 7)
            .field("roce_accl", 0x149, 1)
            .field("log_max_ra_req_qp", 0x14a, 6)
            .field("log_max_ra_res_qp", 0x15a, 6)
            .field("gid_table_size", 0x170, 16)
            .field("out_of_seq_cnt", 0x180, 1)
            .field("retransmission_q_counters", 0x182, 1)
            .field("max_qp_cnt", 0x186, 10)
            .field("pkey_table_size", 0x190, 16)
            .field("local_ca_ack_delay", 0x1ab, 5)
            .field("enhanced_error_q_counters", 0x1b1, 1)
            .field("port_type", 0x1b6, 2)
            .field("num_ports", 0x1b8, 8)
            .field("log_max_msg", 0x1c3, 5)
            .field("stat_rate_support", 0x1e0, 16)
            .field("cqe_version", 0x1fc, 4)
            .field("cmdif_checksum", 0x210, 2)
            .field("roce", 0x21d, 1)
            .field("atomic", 0x21e, 1)
            .field("cq_oi", 0x220, 1)
            .field("cq_resize", 0x221, 1)
            .field("imaicl", 0x231, 1)
            .field("xrc", 0x23c, 1)
            .field("ud", 0x23d, 1)
            .field("uc", 0x23e, 1)
            .field("rc", 0x23f, 1)
            .field("uar_4k", 0x240, 1)
            .field("uar_sz", 0x24a, 6)
            .field("umem_uid_0", 0x252, 1)
            .field("log_pg_sz", 0x258, 8)
            .field("bf", 0x260, 1)
            .field("log_bf_reg_size", 0x26b, 5)
            .field("max_qp_mcg", 0x2e7, 25)
            .field("log_max_mcg", 0x318, 8)
            .field("log_max_transport_domain", 0x323, 5)
            .field("log_max_pd", 0x32b, 5)
            .field("log_max_wq_sz", 0x3db, 5)
            .field("log_uar_page_sz", 0x490, 16)
            .field("num_of_uars_per_page", 0x520, 32)
            .build();

    private HcaCap() {
    }

    /** QUERY_HCA_CAP op_mod for a capability type and mode. */
    public static int opMod(int capType, int mode) {
        return (capType << 1) | (mode & 1);
    }
}
