package io.jhca.connectx;

import org.agrona.MutableDirectBuffer;

import io.jhca.mlx5.cmd.HcaCap;
import io.jhca.mlx5.cmd.Layout;

/**
 * The general capabilities (cmd_hca_cap) the model reports, chosen to match what it implements and what its rxe
 * transport can carry: RoCE on one Ethernet port, RC/UC/UD, 8-byte atomics, MTT memory keys, 64- and 128-byte CQEs,
 * CQE version 1 (user index in srqn_uidx), 4 KiB UARs with a 512-byte BlueFlame register (doorbell halves at 0x800 and
 * 0x900), no SRQ, no XRC, no checksummed commands, no fast teardown. Encodings from mlx5_ifc.h and the kernel's readers:
 * gid_table_size 1 = 16 entries ({@code mlx5_get_gid_table_len}: 8 << n), pkey_table_size 0 = 128
 * ({@code mlx5_to_sw_pkey_sz}: 128 << n).
 */
public final class ModelCaps {

    public static final int LOG_MAX_QP = 12;
    public static final int LOG_MAX_QP_SZ = 15;
    /** SRQs (log2) and WQEs per SRQ (log2): max_srq 4096, max_srq_wr 32767. */
    public static final int LOG_MAX_SRQ = 12;
    public static final int LOG_MAX_SRQ_SZ = 15;
    public static final int LOG_MAX_CQ = 12;
    public static final int LOG_MAX_CQ_SZ = 22;
    public static final int LOG_MAX_EQ = 4;
    public static final int LOG_MAX_EQ_SZ = 22;
    /** 2^15 keys for the driver; the model keeps indexes 2^15 .. 2^16 - 1 for its own (see DeviceState). */
    public static final int LOG_MAX_MKEY = 15;
    public static final int LOG_MAX_PD = 16;
    /** Multicast: 2^13 groups of up to 56 QPs each, as the rxe wire under the model allows (rxe_param.h). */
    public static final int LOG_MAX_MCG = 13;
    public static final int MAX_QP_MCG = 56;
    /** max_qp_rd_atom = 1 << log_max_ra_req_qp, max_qp_init_rd_atom = 1 << log_max_ra_res_qp (mlx5_ib). */
    public static final int LOG_MAX_RA_REQ_QP = 4;
    public static final int LOG_MAX_RA_RES_QP = 4;
    /** 1 GiB messages: the rxe transport streams up to that. */
    public static final int LOG_MAX_MSG = 30;
    public static final int LOG_MAX_MRW_SZ = 40;
    public static final int LOG_BF_REG_SIZE = 9;
    public static final int GID_TABLE_SIZE_ENCODED = 1;
    public static final int GID_TABLE_ENTRIES = 8 << GID_TABLE_SIZE_ENCODED;
    public static final int LOCAL_CA_ACK_DELAY = 16;
    public static final int CQE_VERSION = 1;
    /** Largest receive scatter list the rxe side takes (rxe_param.h RXE_MAX_SGE). */
    public static final int MAX_SGE = 32;
    /** UAR pages in BAR0; page 0 holds the initialization segment. */
    public static final int BAR0_PAGES = 64;
    /** The PCI device ID the model presents: a ConnectX-5 PF (mlx5.md section 5, the kernel's mlx5_core_pci_table). */
    public static final int PCI_DEVICE_ID = 0x1017;
    /** Q counter sets (cmd_hca_cap.max_qp_cnt, a 10-bit field; counter_set_id is 8 bits, 0 meaning none here). */
    public static final int MAX_Q_COUNTERS = 32;

    /**
     * {@code atomic_caps} (QUERY_HCA_CAP type 3), the fields mlx5_core / mlx5_ib read, positions from mlx5_ifc.h
     * {@code struct mlx5_ifc_atomic_caps_bits}: 8-byte CMP_SWAP and FETCH_ADD (driver.h MLX5_ATOMIC_OPS_*) on QPs
     * (MLX5_ATOMIC_CAPS_ATOMIC_SIZE_QP_8_BYTES), in host byte order (mode 1, which is what the rxe transport does
     * and what mlx5_core selects when the device supports it).
     */
    public static final Layout ATOMIC_CAPS = Layout.struct("atomic_caps", 0x100)
            .field("atomic_req_8B_endianness_mode", 0x40, 2)
            .field("supported_atomic_req_8B_endianness_mode_1", 0x46, 1)
            .field("atomic_operations", 0x90, 16)
            .field("atomic_size_qp", 0xb0, 16)
            .field("atomic_size_dc", 0xd0, 16)
            .build();

    /**
     * {@code roce_cap} (QUERY_HCA_CAP type 4), positions from mlx5_ifc.h {@code struct mlx5_ifc_roce_cap_bits}:
     * RoCEv2 only (device.h MLX5_ROCE_VERSION_2_CAP), IPv4 and IPv6 GIDs (MLX5_ROCE_L3_TYPE_IPV4_CAP / _IPV6_CAP),
     * UDP port 4791 (IANA RoCEv2), the GID table size.
     */
    public static final Layout ROCE_CAP = Layout.struct("roce_cap", 0x100)
            .field("l3_type", 0x8c, 4)
            .field("roce_version", 0x98, 8)
            .field("r_roce_dest_udp_port", 0xb0, 16)
            .field("r_roce_max_src_udp_port", 0xc0, 16)
            .field("r_roce_min_src_udp_port", 0xd0, 16)
            .field("roce_address_table_size", 0xf0, 16)
            .build();

    private ModelCaps() {
    }

    /** Atomic capabilities at {@code base}. */
    static void writeAtomic(MutableDirectBuffer b, int base) {
        ATOMIC_CAPS.clear(b, base);
        ATOMIC_CAPS.set(b, base, "atomic_req_8B_endianness_mode", 1);
        ATOMIC_CAPS.set(b, base, "supported_atomic_req_8B_endianness_mode_1", 1);
        ATOMIC_CAPS.set(b, base, "atomic_operations", 0x3);  // CMP_SWAP | FETCH_ADD
        ATOMIC_CAPS.set(b, base, "atomic_size_qp", 0x8);     // 8 bytes
    }

    /** RoCE capabilities at {@code base}. */
    static void writeRoce(MutableDirectBuffer b, int base) {
        ROCE_CAP.clear(b, base);
        ROCE_CAP.set(b, base, "l3_type", 1 << 1 | 1 << 2);
        ROCE_CAP.set(b, base, "roce_version", 1 << 2);
        ROCE_CAP.set(b, base, "r_roce_dest_udp_port", 4791);
        ROCE_CAP.set(b, base, "r_roce_max_src_udp_port", 0xffff);
        ROCE_CAP.set(b, base, "r_roce_min_src_udp_port", 0xc000);
        ROCE_CAP.set(b, base, "roce_address_table_size", GID_TABLE_ENTRIES);
    }

    /** Writes the general capabilities into the cmd_hca_cap at {@code base} (big-endian bit fields). */
    static void write(MutableDirectBuffer b, int base) {
        HcaCap.CMD_HCA_CAP.clear(b, base);
        set(b, base, "log_max_qp_sz", LOG_MAX_QP_SZ);
        set(b, base, "log_max_qp", LOG_MAX_QP);
        set(b, base, "log_max_srq_sz", LOG_MAX_SRQ_SZ);
        set(b, base, "log_max_srq", LOG_MAX_SRQ);
        set(b, base, "log_max_cq_sz", LOG_MAX_CQ_SZ);
        set(b, base, "log_max_cq", LOG_MAX_CQ);
        set(b, base, "log_max_eq_sz", LOG_MAX_EQ_SZ);
        set(b, base, "log_max_mkey", LOG_MAX_MKEY);
        // memory windows (mlx5_ib reports MEM_WINDOW and MEM_WINDOW_TYPE_2B when this bit is set)
        set(b, base, "imaicl", 1);
        set(b, base, "log_max_eq", LOG_MAX_EQ);
        set(b, base, "log_max_mrw_sz", LOG_MAX_MRW_SZ);
        set(b, base, "log_max_ra_req_qp", LOG_MAX_RA_REQ_QP);
        set(b, base, "log_max_ra_res_qp", LOG_MAX_RA_RES_QP);
        set(b, base, "gid_table_size", GID_TABLE_SIZE_ENCODED);
        set(b, base, "pkey_table_size", 0);
        set(b, base, "local_ca_ack_delay", LOCAL_CA_ACK_DELAY);
        set(b, base, "port_type", HcaCap.PORT_TYPE_ETH);
        set(b, base, "num_ports", 1);
        set(b, base, "log_max_msg", LOG_MAX_MSG);
        set(b, base, "cqe_version", CQE_VERSION);
        set(b, base, "cmdif_checksum", 0);
        set(b, base, "roce", 1);
        set(b, base, "atomic", 1);
        set(b, base, "cq_oi", 1);
        set(b, base, "rc", 1);
        set(b, base, "uc", 1);
        set(b, base, "ud", 1);
        set(b, base, "uar_4k", 1);
        set(b, base, "log_pg_sz", 12);
        set(b, base, "bf", 1);
        set(b, base, "log_bf_reg_size", LOG_BF_REG_SIZE);
        set(b, base, "log_max_pd", LOG_MAX_PD);
        // Q counters, and which groups of them count (mlx5_ib exports out_of_sequence, the retransmission group and
        // the enhanced error group only under these bits); roce_accl stays 0: no congestion control counters
        set(b, base, "max_qp_cnt", MAX_Q_COUNTERS);
        set(b, base, "out_of_seq_cnt", 1);
        set(b, base, "retransmission_q_counters", 1);
        set(b, base, "enhanced_error_q_counters", 1);
        set(b, base, "log_uar_page_sz", 0);
        set(b, base, "num_of_uars_per_page", 1);
        set(b, base, "log_max_mcg", LOG_MAX_MCG);
        set(b, base, "max_qp_mcg", MAX_QP_MCG);
    }

    private static void set(MutableDirectBuffer b, int base, String field, long value) {
        HcaCap.CMD_HCA_CAP.set(b, base, field, value);
    }
}
