package io.jhca.cm;

/** Connection events with the names and values of librdmacm's enum rdma_cm_event_type (rdma/rdma_cma.h). */
public enum CmEventType {
    ADDR_RESOLVED, ADDR_ERROR, ROUTE_RESOLVED, ROUTE_ERROR, CONNECT_REQUEST, CONNECT_RESPONSE, CONNECT_ERROR,
    UNREACHABLE, REJECTED, ESTABLISHED, DISCONNECTED, DEVICE_REMOVAL, MULTICAST_JOIN, MULTICAST_ERROR,
    ADDR_CHANGE, TIMEWAIT_EXIT;

    /** The librdmacm value (RDMA_CM_EVENT_ADDR_RESOLVED = 0, ...). */
    public int value() {
        return ordinal();
    }
}
