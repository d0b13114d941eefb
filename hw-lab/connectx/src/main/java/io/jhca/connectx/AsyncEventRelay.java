package io.jhca.connectx;

import io.jhca.mlx5.cmd.QpLayouts;
import io.jhca.mlx5.eq.EventType;
import io.jhca.verbs.AsyncEvent;
import io.jhca.verbs.Context;
import io.jhca.verbs.QueuePair;

/**
 * The affiliated QP events the wire raised on the mirror rxe device become EQEs on the async EQ, as ConnectX raises
 * them (device.h {@code MLX5_EVENT_TYPE_*}, the inverse of mlx5_ib's mlx5_ib_qp_event): a responder that NAKs a
 * bad rkey, say, is a WQ_ACCESS_ERROR on that QP. An error event also puts the model's QP in ERR (QUERY_QP says so).
 * The mirror's CQ overruns are not relayed here: the data path already turns them into CQ_ERROR when it drains the
 * rxe CQ. An SRQ's limit event becomes SRQ_RQ_LIMIT on the SRQ.
 */
final class AsyncEventRelay {
    private final DeviceState st;
    private final Context mirror;

    AsyncEventRelay(DeviceState st, Context mirror) {
        this.st = st;
        this.mirror = mirror;
    }

    /** Relays what the mirror queued since the last call; returns how many events were taken. */
    int relay() {
        int n = 0;
        AsyncEvent e;
        while ((e = mirror.pollAsyncEvent()) != null) {
            n++;
            if (e.type() == AsyncEvent.Type.SRQ_LIMIT_REACHED) {
                SrqCommands.limitReached(st, e);
                continue;
            }
            QueuePair rxeQp = e.qp();
            int type = eqeType(e.type());
            if (rxeQp == null || type < 0) {
                continue;
            }
            DeviceQp qp = st.qp(rxeQp.qpn());
            if (qp == null || qp.rxeQp != rxeQp) {
                continue; // destroyed meanwhile
            }
            if (isError(type)) {
                qp.state = QpLayouts.STATE_ERR;
            }
            DeviceEq eq = st.asyncEq(type);
            if (eq != null) {
                eq.qpEvent(type, qp.qpn);
            }
        }
        return n;
    }

    /** The EQE type of a verbs QP event; -1 for the ones this device does not raise per QP. */
    static int eqeType(AsyncEvent.Type t) {
        switch (t) {
            case QP_FATAL: return EventType.WQ_CATAS_ERROR;
            case QP_REQ_ERR: return EventType.WQ_INVAL_REQ_ERROR;
            case QP_ACCESS_ERR: return EventType.WQ_ACCESS_ERROR;
            case PATH_MIG_ERR: return EventType.PATH_MIG_FAILED;
            case PATH_MIG: return EventType.PATH_MIG;
            case COMM_EST: return EventType.COMM_EST;
            case SQ_DRAINED: return EventType.SQ_DRAINED;
            case QP_LAST_WQE_REACHED: return EventType.SRQ_LAST_WQE;
            default: return -1;
        }
    }

    private static boolean isError(int type) {
        return type == EventType.WQ_CATAS_ERROR || type == EventType.WQ_INVAL_REQ_ERROR
                || type == EventType.WQ_ACCESS_ERROR;
    }
}
