package io.jhca.connectx;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.jhca.mlx5.cmd.QCounterLayouts;
import io.jhca.mlx5.cq.CqeSyndrome;
import io.jhca.rxe.transport.RxeCounters.Counter;

/**
 * A Q counter set (ALLOC_Q_COUNTER) and the QPs attached to it (qpc.counter_set_id at RST2INIT). The model's wire is
 * the rxe transport, which counts per QP; a set's value of a Q counter is what its QPs' rxe counters that mean the
 * same event counted while they were attached: their current counts less the counts at attach, plus what QPs that
 * left (destroyed, or attached elsewhere) had counted, less what a clearing query took. Firmware thread only.
 *
 * <p>Which rxe counter means which Q counter (mlx5_ifc.h query_q_counter_out; the kernel's documentation of the mlx5
 * hw counters): out_of_sequence, duplicate_request and local_ack_timeout_err are the same events;
 * rnr_nak_retry_err is an RNR NAK received (rcvd_rnr_err), packet_seq_err a PSN sequence NAK received
 * (rcvd_seq_err), implied_nak_seq_err a response past the expected PSN (completer_retry_err); out_of_buffer a
 * request dropped or RNR-NAKed for want of a receive WQE; req_remote_access_errors / req_remote_invalid_request the
 * NAKs of that kind the requester received, resp_* the ones the responder sent; req_transport_retries_exceeded the
 * transport retry counter running out; rx_write/read/atomic_requests the requests the responder accepted. The
 * device itself adds the error CQEs it writes for an attached QP ({@link #errorCqe}): req_/resp_cqe_error, or
 * req_/resp_cqe_flush_error for a flush (counted apart, as their names say), and by syndrome the local length,
 * protection and QP operation errors. Counters nothing here can know (MW binding, DCT, congestion control) stay 0.
 */
final class QCounterSet {

    private static final int N = QCounterLayouts.COUNTERS.size();
    /** For each Q counter (QCounterLayouts.COUNTERS order) the rxe counters it adds up; none: 0. */
    private static final Counter[][] SOURCES = new Counter[N][];

    static {
        source("rx_write_requests", Counter.RX_WRITE_REQUESTS);
        source("rx_read_requests", Counter.RX_READ_REQUESTS);
        source("rx_atomic_requests", Counter.RX_ATOMIC_REQUESTS);
        source("out_of_buffer", Counter.SEND_RNR_ERR, Counter.DROP_NO_RECV_WQE);
        source("out_of_sequence", Counter.OUT_OF_SEQUENCE);
        source("duplicate_request", Counter.DUPLICATE_REQUEST);
        source("rnr_nak_retry_err", Counter.RCVD_RNR_ERR);
        source("packet_seq_err", Counter.RCVD_SEQ_ERR);
        source("implied_nak_seq_err", Counter.COMPLETER_RETRY_ERR);
        source("local_ack_timeout_err", Counter.LOCAL_ACK_TIMEOUT_ERR);
        source("req_remote_invalid_request", Counter.RCVD_NAK_INV_REQ);
        source("resp_remote_invalid_request", Counter.SENT_NAK_INV_REQ);
        source("req_remote_access_errors", Counter.RCVD_NAK_REM_ACCESS);
        source("resp_remote_access_errors", Counter.SENT_NAK_REM_ACCESS);
        source("req_remote_operation_errors", Counter.RCVD_NAK_REM_OP);
        source("req_transport_retries_exceeded", Counter.RETRY_EXCEEDED_ERR);
    }

    private static void source(String name, Counter... from) {
        SOURCES[index(name)] = from;
    }

    private static final int REQ_CQE_ERROR = index("req_cqe_error");
    private static final int RESP_CQE_ERROR = index("resp_cqe_error");
    private static final int REQ_CQE_FLUSH_ERROR = index("req_cqe_flush_error");
    private static final int RESP_CQE_FLUSH_ERROR = index("resp_cqe_flush_error");
    private static final int REQ_LOCAL_LENGTH_ERROR = index("req_local_length_error");
    private static final int RESP_LOCAL_LENGTH_ERROR = index("resp_local_length_error");
    private static final int REQ_LOCAL_PROTECTION = index("req_local_protection");
    private static final int RESP_LOCAL_PROTECTION = index("resp_local_protection");
    private static final int LOCAL_OPERATION_ERROR = index("local_operation_error");
    private static final int RESP_LOCAL_QP_ERROR = index("resp_local_qp_error");

    private static int index(String name) {
        int k = QCounterLayouts.COUNTERS.indexOf(name);
        if (k < 0) {
            throw new IllegalStateException("no Q counter " + name);
        }
        return k;
    }

    final int id;
    /** Counted by QPs no longer attached and by the device itself (error CQEs), less what clearing queries took. */
    private final long[] retired = new long[N];
    private final List<DeviceQp> members = new ArrayList<>();
    private final List<long[]> baselines = new ArrayList<>();

    QCounterSet(int id) {
        this.id = id;
    }

    /** The Q counters an rxe QP's counters ({@code statistics()}, by label) amount to, in COUNTERS order. */
    static long[] of(Map<String, Long> rxe) {
        long[] v = new long[N];
        for (int k = 0; k < N; k++) {
            Counter[] from = SOURCES[k];
            if (from != null) {
                for (Counter x : from) {
                    v[k] += rxe.getOrDefault(x.label(), 0L);
                }
            }
        }
        return v;
    }

    private static Map<String, Long> countersOf(DeviceQp qp) {
        return qp.rxeQp.statistics();
    }

    /** Starts counting {@code qp}'s events from now on. */
    void attach(DeviceQp qp) {
        members.add(qp);
        baselines.add(of(countersOf(qp)));
        qp.counterSet = this;
    }

    /** Stops counting {@code qp}, keeping what it counted. */
    void detach(DeviceQp qp) {
        int m = members.indexOf(qp);
        if (m < 0) {
            return;
        }
        long[] now = of(countersOf(qp));
        long[] base = baselines.get(m);
        for (int k = 0; k < N; k++) {
            retired[k] += now[k] - base[k];
        }
        members.remove(m);
        baselines.remove(m);
        qp.counterSet = null;
    }

    /** An error CQE written for a QP of this set, requester or responder side, with its syndrome. */
    void errorCqe(boolean requester, int syndrome) {
        if (syndrome == CqeSyndrome.WR_FLUSH_ERR) {
            add(requester ? REQ_CQE_FLUSH_ERROR : RESP_CQE_FLUSH_ERROR);
            return;
        }
        add(requester ? REQ_CQE_ERROR : RESP_CQE_ERROR);
        switch (syndrome) {
            case CqeSyndrome.LOCAL_LENGTH_ERR -> add(requester ? REQ_LOCAL_LENGTH_ERROR : RESP_LOCAL_LENGTH_ERROR);
            case CqeSyndrome.LOCAL_PROT_ERR -> add(requester ? REQ_LOCAL_PROTECTION : RESP_LOCAL_PROTECTION);
            case CqeSyndrome.LOCAL_QP_OP_ERR -> add(requester ? LOCAL_OPERATION_ERROR : RESP_LOCAL_QP_ERROR);
            default -> { }
        }
    }

    private void add(int counter) {
        retired[counter]++;
    }

    int members() {
        return members.size();
    }

    /** The current values; with {@code clear} the set counts from zero again afterwards. */
    long[] read(boolean clear) {
        long[] v = retired.clone();
        for (int m = 0; m < members.size(); m++) {
            long[] now = of(countersOf(members.get(m)));
            long[] base = baselines.get(m);
            for (int k = 0; k < N; k++) {
                v[k] += now[k] - base[k];
            }
        }
        if (clear) {
            for (int k = 0; k < N; k++) {
                retired[k] -= v[k];
            }
        }
        return v;
    }
}
