package io.jhca.lab;

import io.jhca.verbs.Context;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The device counters that say whether a measured run lost packets and recovered (retransmissions, retransmit
 * timeouts, sequence and RNR NAKs, requests out of sequence or repeated), over the same windows as the
 * {@link JvmReport}. A bandwidth or latency figure from a run that resent packets measures the recovery, not the
 * path: with net.core.rmem_max capping a socket buffer, a default write-bw here resent 88000 packets and still
 * printed a plausible number. Counters are the provider's own names ({@link Context#statistics()}: rxe's, mlx5's Q
 * counters); a provider that keeps none of them gets no line.
 */
final class LossCounters {
    /** rxe (hw_counters and jhca's), then mlx5 Q counter names (mlx5_ifc.h query_q_counter_out), in print order. */
    static final List<String> NAMES = List.of("retransmitted_pkts", "local_ack_timeout_err", "rcvd_seq_err",
            "packet_seq_err", "implied_nak_seq_err", "rcvd_rnr_err", "rnr_nak_retry_err", "out_of_sequence",
            "duplicate_request", "out_of_buffer");

    private final Context ctx;
    private final Map<String, Long> moved = new LinkedHashMap<>();
    private Map<String, Long> at;

    LossCounters(Context ctx) {
        this.ctx = ctx;
    }

    /** Starts (another) window; windows add up. */
    void begin() {
        at = ctx.statistics();
    }

    /** Ends the current window. */
    void stop() {
        if (at == null) {
            return;
        }
        Map<String, Long> now = ctx.statistics();
        for (String n : NAMES) {
            Long a = at.get(n);
            Long b = now.get(n);
            if (a != null && b != null) {
                moved.merge(n, b - a, Long::sum);
            }
        }
        at = null;
    }

    /** What each counter moved by in the windows, by name (empty if the provider keeps none of them). */
    Map<String, Long> moved() {
        return moved;
    }

    /** " Device rxe1 during measurement: retransmitted_pkts 0, ...", or null if the provider keeps none. */
    String line(String device) {
        if (moved.isEmpty()) {
            return null;
        }
        StringBuilder b = new StringBuilder(" Device " + device + " during measurement (packets lost and recovered): ");
        String sep = "";
        for (Map.Entry<String, Long> e : moved.entrySet()) {
            b.append(sep).append(e.getKey()).append(' ').append(e.getValue());
            sep = ", ";
        }
        return b.toString();
    }
}
