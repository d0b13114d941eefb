package io.jhca.cm;

import io.jhca.cm.mad.RejectReason;

/**
 * One connection event ({@code struct rdma_cm_event}): its type, the ID it is about ({@link #id}: for
 * CONNECT_REQUEST a new ID for the request, {@link #listenId} the listener), a status (0, or a negative errno for
 * errors and the REJ reason code for REJECTED) and the peer's private data.
 */
public record CmEvent(CmEventType type, CmId id, CmId listenId, int status, byte[] privateData) {

    /** For REJECTED: the REJ's reason (null if the code is not one IBTA defines). */
    public RejectReason rejectReason() {
        return type == CmEventType.REJECTED ? RejectReason.of(status) : null;
    }

    @Override
    public String toString() {
        return "RDMA_CM_EVENT_" + type + (status != 0 ? " status " + status : "")
                + (rejectReason() != null ? " (" + rejectReason() + ")" : "");
    }
}
