package io.jhca.mlx5.cmd;

/**
 * Queue pair commands and contexts: the address path {@code ads}, the QP context {@code qpc}, CREATE_QP,
 * DESTROY_QP, the state transitions RST2INIT / INIT2RTR / RTR2RTS / 2ERR / 2RST, QUERY_QP. Positions from the
 * kernel's mlx5_ifc.h. Which qpc fields each transition reads (kernel drivers/infiniband/hw/mlx5/qp.c): RST2INIT
 * rre/rwe/rae, pkey_index, vhca_port_num; INIT2RTR mtu, log_msg_max, remote_qpn, next_rcv_psn, log_rra_max,
 * min_rnr_nak and the primary address path; RTR2RTS next_send_psn, retry_count, rnr_retry, log_sra_max,
 * ads.ack_timeout. qpc.log_page_size counts from 4 KiB (page shift - 12); log_rq_stride is log2(RQ WQE size) - 4;
 * log_sq_size / log_rq_size are log2 of the WQE(BB) counts.
 */
public final class QpLayouts {

    /** qpc.st, mlx5_ifc {@code MLX5_QPC_ST_*}. */
    public static final int ST_RC = 0x0;
    public static final int ST_UC = 0x1;
    public static final int ST_UD = 0x2;
    public static final int ST_XRC = 0x3;
    public static final int ST_RAW_DATAGRAM = 0x9;
    /** mlx5_ifc {@code MLX5_QPC_ST_QP1}: the GSI QP, QPN 1 on the wire, UD semantics (mlx5_ib's gsi QP). */
    public static final int ST_QP1 = 0x8;
    /** qpc.pm_state, mlx5_ifc {@code MLX5_QPC_PM_STATE_MIGRATED} (what the kernel sets at create). */
    public static final int PM_STATE_MIGRATED = 0x3;
    /** qpc.mtu, mlx5_ifc {@code MLX5_QPC_MTU_*}: 1 = 256 B ... 5 = 4096 B, 7 = raw Ethernet QP. */
    public static final int MTU_256 = 1;
    public static final int MTU_512 = 2;
    public static final int MTU_1024 = 3;
    public static final int MTU_2048 = 4;
    public static final int MTU_4096 = 5;
    /** qpc.state as QUERY_QP reports it, mlx5_ifc {@code MLX5_QPC_STATE_*}. */
    public static final int STATE_RST = 0x0;
    public static final int STATE_INIT = 0x1;
    public static final int STATE_RTR = 0x2;
    public static final int STATE_RTS = 0x3;
    public static final int STATE_SQER = 0x4;
    public static final int STATE_ERR = 0x6;
    public static final int STATE_SQD = 0x7;

    /** Address path, 44 bytes. {@code rmac} is a 48-bit alias over rmac_47_32 and rmac_31_0 (crosses a dword). */
    public static final Layout ADS = Layout.struct("ads", 0x2c)
            .field("fl", 0x00, 1)
            .field("free_ar", 0x01, 1)
            .field("pkey_index", 0x10, 16)
            .field("grh", 0x28, 1)
            .field("mlid", 0x29, 7)
            .field("rlid", 0x30, 16)
            .field("ack_timeout", 0x40, 5)
            .field("src_addr_index", 0x48, 8)
            .field("stat_rate", 0x54, 4)
            .field("hop_limit", 0x58, 8)
            .field("tclass", 0x64, 8)
            .field("flow_label", 0x6c, 20)
            .bytes("rgid_rip", 0x80, 16)
            .field("f_dscp", 0x104, 1)
            .field("f_ecn", 0x105, 1)
            .field("f_eth_prio", 0x107, 1)
            .field("ecn", 0x108, 2)
            .field("dscp", 0x10a, 6)
            .field("udp_sport", 0x110, 16)
            .field("dei_cfi", 0x120, 1)
            .field("eth_prio", 0x121, 3)
            .field("sl", 0x124, 4)
            .field("vhca_port_num", 0x128, 8)
            .field("rmac_47_32", 0x130, 16)
            .field("rmac_31_0", 0x140, 32)
            .alias("rmac", 0x130, 48)
            .build();

    /** QP context, 232 bytes. */
    public static final Layout QPC = Layout.struct("qpc", 0xe8)
            .field("state", 0x00, 4)
            .field("lag_tx_port_affinity", 0x04, 4)
            .field("st", 0x08, 8)
            .field("isolate_vl_tc", 0x12, 1)
            .field("pm_state", 0x13, 2)
            .field("req_e2e_credit_mode", 0x16, 2)
            .field("offload_type", 0x18, 4)
            .field("end_padding_mode", 0x1c, 2)
            .field("wq_signature", 0x20, 1)
            .field("block_lb_mc", 0x21, 1)
            .field("atomic_like_write_en", 0x22, 1)
            .field("latency_sensitive", 0x23, 1)
            .field("drain_sigerr", 0x25, 1)
            .field("pd", 0x28, 24)
            .field("mtu", 0x40, 3)
            .field("log_msg_max", 0x43, 5)
            .field("log_rq_size", 0x49, 4)
            .field("log_rq_stride", 0x4d, 3)
            .field("no_sq", 0x50, 1)
            .field("log_sq_size", 0x51, 4)
            .field("ts_format", 0x58, 2)
            .field("rlky", 0x5b, 1)
            .field("ulp_stateless_offload_mode", 0x5c, 4)
            .field("counter_set_id", 0x60, 8)
            .field("uar_page", 0x68, 24)
            .field("user_index", 0x88, 24)
            .field("log_page_size", 0xa3, 5)
            .field("remote_qpn", 0xa8, 24)
            .embed("primary_address_path", 0xc0, ADS)
            .embed("secondary_address_path", 0x220, ADS)
            .field("log_ack_req_freq", 0x380, 4)
            .field("log_sra_max", 0x388, 3)
            .field("retry_count", 0x38d, 3)
            .field("rnr_retry", 0x390, 3)
            .field("fre", 0x394, 1)
            .field("cur_rnr_retry", 0x395, 3)
            .field("cur_retry_count", 0x398, 3)
            .field("next_send_psn", 0x3c8, 24)
            .field("log_num_dci_stream_channels", 0x3e3, 5)
            .field("cqn_snd", 0x3e8, 24)
            .field("log_num_dci_errored_streams", 0x403, 5)
            .field("deth_sqpn", 0x408, 24)
            .field("last_acked_psn", 0x448, 24)
            .field("ssn", 0x468, 24)
            .field("log_rra_max", 0x488, 3)
            .field("atomic_mode", 0x48c, 4)
            .field("rre", 0x490, 1)
            .field("rwe", 0x491, 1)
            .field("rae", 0x492, 1)
            .field("page_offset", 0x494, 6)
            .field("cd_slave_receive", 0x49d, 1)
            .field("cd_slave_send", 0x49e, 1)
            .field("cd_master", 0x49f, 1)
            .field("min_rnr_nak", 0x4a3, 5)
            .field("next_rcv_psn", 0x4a8, 24)
            .field("xrcd", 0x4c8, 24)
            .field("cqn_rcv", 0x4e8, 24)
            .field("dbr_addr", 0x500, 64)
            .field("q_key", 0x540, 32)
            .field("rq_type", 0x565, 3)
            .field("srqn_rmpn_xrqn", 0x568, 24)
            .field("rmsn", 0x588, 24)
            .field("hw_sq_wqebb_counter", 0x5a0, 16)
            .field("sw_sq_wqebb_counter", 0x5b0, 16)
            .field("hw_rq_counter", 0x5c0, 32)
            .field("sw_rq_counter", 0x5e0, 32)
            .field("cgs", 0x62f, 1)
            .field("cs_req", 0x630, 8)
            .field("cs_res", 0x638, 8)
            .field("dc_access_key", 0x640, 64)
            .field("dbr_umem_valid", 0x683, 1)
            .build();

    /** The WQ buffer (RQ then SQ) is described by the trailing PAS list at byte 0x110. */
    public static final Layout CREATE_QP_IN = Layout.struct("create_qp_in", 0x110).inHeader(true)
            .field("input_qpn", 0x48, 24)
            .field("opt_param_mask", 0x80, 32)
            .field("ece", 0xa0, 32)
            .embed("qpc", 0xc0, QPC)
            .field("wq_umem_valid", 0x860, 1)
            .flexibleArray("pas", 0x880, 64)
            .build();
    public static final Layout CREATE_QP_OUT = Layout.struct("create_qp_out", 0x10).outHeader()
            .field("qpn", 0x48, 24)
            .field("ece", 0x60, 32)
            .build();

    public static final Layout DESTROY_QP_IN = qpnOnly("destroy_qp_in", true);
    public static final Layout DESTROY_QP_OUT = Layout.struct("destroy_qp_out", 0x10).outHeader().build();

    public static final Layout RST2INIT_QP_IN = modify("rst2init_qp_in");
    public static final Layout RST2INIT_QP_OUT = modifyOut("rst2init_qp_out");
    public static final Layout INIT2RTR_QP_IN = modify("init2rtr_qp_in");
    public static final Layout INIT2RTR_QP_OUT = modifyOut("init2rtr_qp_out");
    public static final Layout RTR2RTS_QP_IN = modify("rtr2rts_qp_in");
    public static final Layout RTR2RTS_QP_OUT = modifyOut("rtr2rts_qp_out");

    public static final Layout QP_2ERR_IN = qpnOnly("qp_2err_in", true);
    public static final Layout QP_2ERR_OUT = Layout.struct("qp_2err_out", 0x10).outHeader().build();
    public static final Layout QP_2RST_IN = qpnOnly("qp_2rst_in", true);
    public static final Layout QP_2RST_OUT = Layout.struct("qp_2rst_out", 0x10).outHeader().build();

    public static final Layout QUERY_QP_IN = qpnOnly("query_qp_in", false);
    public static final Layout QUERY_QP_OUT = Layout.struct("query_qp_out", 0x110).outHeader()
            .field("opt_param_mask", 0x80, 32)
            .field("ece", 0xa0, 32)
            .embed("qpc", 0xc0, QPC)
            .flexibleArray("pas", 0x880, 64)
            .build();

    private QpLayouts() {
    }

    private static Layout qpnOnly(String name, boolean uid) {
        return Layout.struct(name, 0x10).inHeader(uid).field("qpn", 0x48, 24).build();
    }

    /** RST2INIT, INIT2RTR and RTR2RTS share one shape: qpn, opt_param_mask, ece, qpc (272 bytes). */
    private static Layout modify(String name) {
        return Layout.struct(name, 0x110).inHeader(true)
                .field("qpn", 0x48, 24)
                .field("opt_param_mask", 0x80, 32)
                .field("ece", 0xa0, 32)
                .embed("qpc", 0xc0, QPC)
                .build();
    }

    private static Layout modifyOut(String name) {
        return Layout.struct(name, 0x10).outHeader().field("ece", 0x60, 32).build();
    }
}
