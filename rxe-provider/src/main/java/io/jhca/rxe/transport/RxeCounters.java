package io.jhca.rxe.transport;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Per-device counters. The first group carries the names of Linux rxe's hw_counters
 * ({@code /sys/class/infiniband/<dev>/ports/1/hw_counters}, rxe_hw_counters.c, "ack_deffered" spelled as rxe
 * spells it), the drop_* group says why a received packet was discarded. Written by the device's engine only
 * (single writer: a plain increment published with a release store), read from any thread.
 */
public final class RxeCounters {

    public enum Counter {
        SENT_PKTS("sent_pkts"),
        RCVD_PKTS("rcvd_pkts"),
        DUPLICATE_REQUEST("duplicate_request"),
        OUT_OF_SEQUENCE("out_of_sequence"),
        RCVD_RNR_ERR("rcvd_rnr_err"),
        SEND_RNR_ERR("send_rnr_err"),
        RCVD_SEQ_ERR("rcvd_seq_err"),
        ACK_DEFERRED("ack_deffered"),
        RETRY_EXCEEDED_ERR("retry_exceeded_err"),
        RETRY_RNR_EXCEEDED_ERR("retry_rnr_exceeded_err"),
        COMPLETER_RETRY_ERR("completer_retry_err"),
        SEND_ERR("send_err"),
        LINK_DOWNED("link_downed"),
        RDMA_SENDS("rdma_sends"),
        RDMA_RECVS("rdma_recvs"),
        // why received packets were dropped
        DROP_TRUNCATED("drop_truncated"),
        DROP_BAD_LENGTH("drop_bad_length"),
        DROP_OVERSIZE("drop_oversize"),
        DROP_UNKNOWN_OPCODE("drop_unknown_opcode"),
        DROP_BAD_TVER("drop_bad_tver"),
        DROP_BAD_PKEY("drop_bad_pkey"),
        DROP_BAD_ICRC("drop_bad_icrc"),
        DROP_QP0("drop_qp0"),
        DROP_UNKNOWN_QPN("drop_unknown_qpn"),
        DROP_BAD_QP_TYPE("drop_bad_qp_type"),
        DROP_BAD_QP_STATE("drop_bad_qp_state"),
        DROP_BAD_SRC_ADDR("drop_bad_src_addr"),
        DROP_BAD_QKEY("drop_bad_qkey"),
        DROP_NO_RECV_WQE("drop_no_recv_wqe"),
        DROP_OUT_OF_SEQUENCE("drop_out_of_sequence"),
        DROP_UNEXPECTED_RESPONSE("drop_unexpected_response"),
        DROP_STALE_DUPLICATE("drop_stale_duplicate"),
        /** A response whose PSN was never sent (outside the window of PSNs sent). */
        DROP_GHOST_RESPONSE("drop_ghost_response"),
        // received IPv4 ICRCs that passed: all 32 bits checked for ID 0, or the ID solved for (Ipv4IdMode)
        ICRC_CHECKED_FULL("icrc_checked_full"),
        ICRC_RECOVERED_ID("icrc_recovered_id"),
        // transmit side
        TX_REFUSED("tx_refused"),
        ENGINE_ERRORS("engine_errors");

        private final String label;

        Counter(final String label) {
            this.label = label;
        }

        /** The rxe-style name, e.g. "rcvd_seq_err". */
        public String label() {
            return label;
        }
    }

    private static final Counter[] ALL = Counter.values();

    private final AtomicLongArray values = new AtomicLongArray(ALL.length);

    /** Engine side: +1. */
    public void increment(final Counter c) {
        final int i = c.ordinal();
        values.lazySet(i, values.get(i) + 1);
    }

    public long get(final Counter c) {
        return values.get(c.ordinal());
    }

    /** Total of the drop_* counters. */
    public long dropped() {
        long n = 0;
        for (final Counter c : ALL) {
            if (c.label.startsWith("drop_")) {
                n += get(c);
            }
        }
        return n;
    }

    /** Every counter by its label, in declaration order (for tools and test messages). */
    public Map<String, Long> snapshot() {
        final Map<String, Long> m = new LinkedHashMap<>();
        for (final Counter c : ALL) {
            m.put(c.label, get(c));
        }
        return m;
    }

    @Override
    public String toString() {
        final StringBuilder sb = new StringBuilder("{");
        for (final Counter c : ALL) {
            final long v = get(c);
            if (v != 0) {
                sb.append(sb.length() == 1 ? "" : ", ").append(c.label).append('=').append(v);
            }
        }
        return sb.append('}').toString();
    }
}
