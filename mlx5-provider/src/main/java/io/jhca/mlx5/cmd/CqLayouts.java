package io.jhca.mlx5.cmd;

/**
 * CREATE_CQ / DESTROY_CQ and the completion queue context {@code cqc}: the CQ buffer is described by the trailing
 * PAS list (big-endian 64-bit page addresses, pages of 4 KiB << cqc.log_page_size), the doorbell record by
 * {@code dbr_addr}. log_page_size counts from 4 KiB (page shift - 12, MLX5_ADAPTER_PAGE_SHIFT); log_cq_size is
 * log2 of the number of CQEs. Positions from mlx5_ifc.h. Kernel 6.1 calls the EQ number {@code c_eqn_or_apu_element} (older
 * headers: {@code c_eqn}).
 */
public final class CqLayouts {

    /** mlx5_ifc {@code MLX5_CQC_CQE_SZ_*}. */
    public static final int CQE_SZ_64 = 0;
    public static final int CQE_SZ_128 = 1;

    public static final Layout CQC = Layout.struct("cqc", 0x40)
            .field("status", 0x00, 4)
            .field("dbr_umem_valid", 0x06, 1)
            .field("apu_cq", 0x07, 1)
            .field("cqe_sz", 0x08, 3)
            .field("cc", 0x0b, 1)
            .field("scqe_break_moderation_en", 0x0d, 1)
            .field("oi", 0x0e, 1)
            .field("cq_period_mode", 0x0f, 2)
            .field("cqe_comp_en", 0x11, 1)
            .field("mini_cqe_res_format", 0x12, 2)
            .field("st", 0x14, 4)
            .field("cqe_compression_layout", 0x1e, 2)
            .field("page_offset", 0x54, 6)
            .field("log_cq_size", 0x63, 5)
            .field("uar_page", 0x68, 24)
            .field("cq_period", 0x84, 12)
            .field("cq_max_count", 0x90, 16)
            .field("c_eqn_or_apu_element", 0xa0, 32)
            .field("log_page_size", 0xc3, 5)
            .field("last_notified_index", 0x108, 24)
            .field("last_solicit_index", 0x128, 24)
            .field("consumer_counter", 0x148, 24)
            .field("producer_counter", 0x168, 24)
            .field("dbr_addr", 0x1c0, 64)
            .build();

    public static final Layout CREATE_CQ_IN = Layout.struct("create_cq_in", 0x110).inHeader(true)
            .embed("cq_context", 0x80, CQC)
            .field("cq_umem_valid", 0x2e0, 1)
            .flexibleArray("pas", 0x880, 64)
            .build();
    public static final Layout CREATE_CQ_OUT = Layout.struct("create_cq_out", 0x10).outHeader()
            .field("cqn", 0x48, 24)
            .build();

    public static final Layout DESTROY_CQ_IN = Layout.struct("destroy_cq_in", 0x10).inHeader(true)
            .field("cqn", 0x48, 24)
            .build();
    public static final Layout DESTROY_CQ_OUT = Layout.struct("destroy_cq_out", 0x10).outHeader().build();

    private CqLayouts() {
    }
}
