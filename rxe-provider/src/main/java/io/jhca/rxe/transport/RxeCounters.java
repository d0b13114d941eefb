package io.jhca.rxe.transport;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Counters of a device or of one QP. The first group carries the names of Linux rxe's hw_counters
 * ({@code /sys/class/infiniband/<dev>/ports/1/hw_counters}, rxe_hw_counters.c, "ack_deffered" spelled as rxe
 * spells it); then bytes, retransmissions, timeouts and NAKs by kind (names after mlx5's hw_counters where it has
 * one, e.g. local_ack_timeout_err), the drop_* group saying why a received packet was discarded, and the ICRC
 * outcomes. A QP keeps the counters marked per-QP (everything that happens once a packet has reached it); the
 * device counts everything. Written by the device's engine only (single writer: a plain increment published
 * with a release store), read from any thread.
 */
public final class RxeCounters {

    public enum Counter {
        SENT_PKTS("sent_pkts", true),
        RCVD_PKTS("rcvd_pkts", true),
        SENT_BYTES("sent_bytes", true),
        RCVD_BYTES("rcvd_bytes", true),
        DUPLICATE_REQUEST("duplicate_request", true),
        OUT_OF_SEQUENCE("out_of_sequence", true),
        RCVD_RNR_ERR("rcvd_rnr_err", true),
        SEND_RNR_ERR("send_rnr_err", true),
        RCVD_SEQ_ERR("rcvd_seq_err", true),
        ACK_DEFERRED("ack_deffered", true),
        RETRY_EXCEEDED_ERR("retry_exceeded_err", true),
        RETRY_RNR_EXCEEDED_ERR("retry_rnr_exceeded_err", true),
        COMPLETER_RETRY_ERR("completer_retry_err", true),
        SEND_ERR("send_err", true),
        LINK_DOWNED("link_downed", false), // rxe counts its netdev going down; this port is always ACTIVE
        // SENDs retired by the requester (any status but a flush), receive WQEs consumed with success
        RDMA_SENDS("rdma_sends", true),
        RDMA_RECVS("rdma_recvs", true),
        // the responder: new in-sequence requests it accepted, by kind (mlx5's Q counter names), counted at their
        // first packet whether or not their key then checks out
        RX_WRITE_REQUESTS("rx_write_requests", true),
        RX_READ_REQUESTS("rx_read_requests", true),
        RX_ATOMIC_REQUESTS("rx_atomic_requests", true),
        // the requester: packets sent again, retransmit timer expiries, NAKs received by kind
        RETRANSMITTED_PKTS("retransmitted_pkts", true),
        LOCAL_ACK_TIMEOUT_ERR("local_ack_timeout_err", true),
        RCVD_NAK_INV_REQ("rcvd_nak_inv_req", true),
        RCVD_NAK_REM_ACCESS("rcvd_nak_rem_access", true),
        RCVD_NAK_REM_OP("rcvd_nak_rem_op", true),
        // the responder: NAKs sent by kind (RNR NAKs are send_rnr_err)
        SENT_NAK_SEQ_ERR("sent_nak_seq_err", true),
        SENT_NAK_INV_REQ("sent_nak_inv_req", true),
        SENT_NAK_REM_ACCESS("sent_nak_rem_access", true),
        SENT_NAK_REM_OP("sent_nak_rem_op", true),
        // why received packets were dropped
        DROP_TRUNCATED("drop_truncated", false),
        DROP_BAD_LENGTH("drop_bad_length", true),
        DROP_OVERSIZE("drop_oversize", false),
        DROP_UNKNOWN_OPCODE("drop_unknown_opcode", false),
        DROP_BAD_TVER("drop_bad_tver", false),
        DROP_BAD_PKEY("drop_bad_pkey", false),
        DROP_BAD_ICRC("drop_bad_icrc", false),
        DROP_QP0("drop_qp0", false),
        DROP_UNKNOWN_QPN("drop_unknown_qpn", false),
        DROP_BAD_QP_TYPE("drop_bad_qp_type", true),
        DROP_BAD_QP_STATE("drop_bad_qp_state", true),
        DROP_BAD_SRC_ADDR("drop_bad_src_addr", true),
        DROP_BAD_QKEY("drop_bad_qkey", true),
        DROP_NO_RECV_WQE("drop_no_recv_wqe", true),
        DROP_OUT_OF_SEQUENCE("drop_out_of_sequence", true),
        DROP_UNEXPECTED_RESPONSE("drop_unexpected_response", true),
        DROP_STALE_DUPLICATE("drop_stale_duplicate", true),
        /** A response whose PSN was never sent (outside the window of PSNs sent). */
        DROP_GHOST_RESPONSE("drop_ghost_response", true),
        // received IPv4 ICRCs that passed: all 32 bits checked for ID 0, or the ID solved for (Ipv4IdMode)
        ICRC_CHECKED_FULL("icrc_checked_full", false),
        ICRC_RECOVERED_ID("icrc_recovered_id", false),
        // transmit side
        TX_REFUSED("tx_refused", false),
        ENGINE_ERRORS("engine_errors", false),
        // multicast: datagrams taken from joined groups, and those no attached QP could take
        RCVD_MCAST_PKTS("rcvd_mcast_pkts", false),
        DROP_MCAST_NO_MEMBER("drop_mcast_no_member", false),
        DROP_MCAST_BAD_QPN("drop_mcast_bad_qpn", false),
        /** A held ACK replaced by a later one before it left (coalesced acknowledges; ack_deffered counts holds). */
        ACKS_COALESCED("acks_coalesced", true),
        /**
         * Held ACKs sent by the caller-progress watch thread: the application made no progress call for a while
         * (HeldAckWatch#QUIET_NANOS) after the ACK fell due.
         */
        ACKS_SENT_BY_WATCH("acks_sent_by_watch", true);

        private final String label;
        private final boolean perQp;

        Counter(final String label, final boolean perQp) {
            this.label = label;
            this.perQp = perQp;
        }

        /** True if a QP keeps this counter too (false: only the device can know, e.g. drops before QP lookup). */
        public boolean perQp() {
            return perQp;
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

    /** Engine side: +n. */
    public void add(final Counter c, final long n) {
        final int i = c.ordinal();
        values.lazySet(i, values.get(i) + n);
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
        return snapshot(false);
    }

    /** The per-QP counters by label, in declaration order. */
    public Map<String, Long> snapshotPerQp() {
        return snapshot(true);
    }

    private Map<String, Long> snapshot(final boolean perQpOnly) {
        final Map<String, Long> m = new LinkedHashMap<>();
        for (final Counter c : ALL) {
            if (!perQpOnly || c.perQp) {
                m.put(c.label, get(c));
            }
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
