package io.jhca.mlx5.cmd;

/**
 * CREATE_EQ / DESTROY_EQ and the event queue context {@code eqc}. {@code event_bitmask} is four big-endian 64-bit
 * words; event type t is bit (t % 64) of word (t / 64) (rdma-core sets 1 << 0x0a CMD and 1 << 0x0b PAGE_REQUEST in
 * word 0). log_page_size counts from 4 KiB (rdma-core: ilog32(size - 1) - MLX5_ADAPTER_PAGE_SHIFT). Positions from
 * mlx5_ifc.h.
 */
public final class EqLayouts {

    public static final Layout EQC = Layout.struct("eqc", 0x40)
            .field("status", 0x00, 4)
            .field("ec", 0x0d, 1)
            .field("oi", 0x0e, 1)
            .field("st", 0x14, 4)
            .field("page_offset", 0x54, 6)
            .field("log_eq_size", 0x63, 5)
            .field("uar_page", 0x68, 24)
            .field("intr", 0xb4, 12)
            .field("log_page_size", 0xc3, 5)
            .field("consumer_counter", 0x148, 24)
            .field("producer_counter", 0x168, 24)
            .build();

    public static final Layout CREATE_EQ_IN = Layout.struct("create_eq_in", 0x110).inHeader(true)
            .embed("eq_context_entry", 0x80, EQC)
            .array("event_bitmask", 0x2c0, 64, 4)
            .flexibleArray("pas", 0x880, 64)
            .build();
    public static final Layout CREATE_EQ_OUT = Layout.struct("create_eq_out", 0x10).outHeader()
            .field("eq_number", 0x58, 8)
            .build();

    public static final Layout DESTROY_EQ_IN = Layout.struct("destroy_eq_in", 0x10).inHeader(false)
            .field("eq_number", 0x58, 8)
            .build();
    public static final Layout DESTROY_EQ_OUT = Layout.struct("destroy_eq_out", 0x10).outHeader().build();

    private EqLayouts() {
    }
}
