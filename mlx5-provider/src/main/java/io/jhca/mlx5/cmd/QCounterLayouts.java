package io.jhca.mlx5.cmd;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * ALLOC_Q_COUNTER / DEALLOC_Q_COUNTER / QUERY_Q_COUNTER: a Q counter set is an 8-bit counter_set_id that QPs name in
 * qpc.counter_set_id (set at RST2INIT); the device counts events of every QP attached to it, and QUERY_Q_COUNTER
 * reads the 32-bit counters (with {@code clear}, reads and zeroes them). Positions from mlx5_ifc.h
 * {@code struct mlx5_ifc_query_q_counter_out_bits}. {@link #COUNTERS} lists the counter fields in header order; the
 * kernel's mlx5_ib exports a Q counter under its field name (counters.c {@code INIT_Q_COUNTER(name)}: name and
 * offset from the one identifier), so these are the names {@code rdma statistic show} prints.
 */
public final class QCounterLayouts {

    public static final Layout ALLOC_Q_COUNTER_IN = Layout.struct("alloc_q_counter_in", 0x10).inHeader(true).build();
    public static final Layout ALLOC_Q_COUNTER_OUT = Layout.struct("alloc_q_counter_out", 0x10).outHeader()
            .field("counter_set_id", 0x58, 8)
            .build();

    public static final Layout DEALLOC_Q_COUNTER_IN = Layout.struct("dealloc_q_counter_in", 0x10).inHeader(false)
            .field("counter_set_id", 0x58, 8)
            .build();
    public static final Layout DEALLOC_Q_COUNTER_OUT = Layout.struct("dealloc_q_counter_out", 0x10).outHeader().build();

    public static final Layout QUERY_Q_COUNTER_IN = Layout.struct("query_q_counter_in", 0x20).inHeader(false)
            .field("clear", 0xc0, 1)
            .field("counter_set_id", 0xf8, 8)
            .build();

    public static final Layout QUERY_Q_COUNTER_OUT = Layout.struct("query_q_counter_out", 0x100).outHeader()
            .field("rx_write_requests", 0x80, 32)
            .field("rx_read_requests", 0xc0, 32)
            .field("rx_atomic_requests", 0x100, 32)
            .field("rx_dct_connect", 0x140, 32)
            .field("out_of_buffer", 0x180, 32)
            .field("out_of_sequence", 0x1c0, 32)
            .field("duplicate_request", 0x200, 32)
            .field("rnr_nak_retry_err", 0x240, 32)
            .field("packet_seq_err", 0x280, 32)
            .field("implied_nak_seq_err", 0x2c0, 32)
            .field("local_ack_timeout_err", 0x300, 32)
            .field("resp_local_length_error", 0x3c0, 32)
            .field("req_local_length_error", 0x3e0, 32)
            .field("resp_local_qp_error", 0x400, 32)
            .field("local_operation_error", 0x420, 32)
            .field("resp_local_protection", 0x440, 32)
            .field("req_local_protection", 0x460, 32)
            .field("resp_cqe_error", 0x480, 32)
            .field("req_cqe_error", 0x4a0, 32)
            .field("req_mw_binding", 0x4c0, 32)
            .field("req_bad_response", 0x4e0, 32)
            .field("req_remote_invalid_request", 0x500, 32)
            .field("resp_remote_invalid_request", 0x520, 32)
            .field("req_remote_access_errors", 0x540, 32)
            .field("resp_remote_access_errors", 0x560, 32)
            .field("req_remote_operation_errors", 0x580, 32)
            .field("req_transport_retries_exceeded", 0x5a0, 32)
            .field("cq_overflow", 0x5c0, 32)
            .field("resp_cqe_flush_error", 0x5e0, 32)
            .field("req_cqe_flush_error", 0x600, 32)
            .field("roce_adp_retrans", 0x640, 32)
            .field("roce_adp_retrans_to", 0x660, 32)
            .field("roce_slow_restart", 0x680, 32)
            .field("roce_slow_restart_cnps", 0x6a0, 32)
            .field("roce_slow_restart_trans", 0x6c0, 32)
            .build();

    /** Every counter field of {@link #QUERY_Q_COUNTER_OUT}, in header order (what statistics() reports). */
    public static final List<String> COUNTERS;

    static {
        List<String> names = new ArrayList<>();
        for (Field f : QUERY_Q_COUNTER_OUT.fields()) {
            if (f.bitOffset() >= 0x80) { // past status, syndrome and the reserved header dwords
                names.add(f.name());
            }
        }
        COUNTERS = Collections.unmodifiableList(names);
    }

    private QCounterLayouts() {
    }
}
