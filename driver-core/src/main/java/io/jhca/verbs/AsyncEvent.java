package io.jhca.verbs;

/**
 * An asynchronous event ({@code ibv_get_async_event}): something went wrong outside any one work request.
 *
 * @param type     the event type
 * @param resource the resource it concerns ("CQ 2", "QP 0x000011")
 * @param detail   a sentence saying what happened
 */
public record AsyncEvent(Type type, String resource, String detail) {

    /** Event types with the names of {@code enum ibv_event_type}. */
    public enum Type {
        CQ_ERR, QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, PATH_MIG, PATH_MIG_ERR, DEVICE_FATAL,
        PORT_ACTIVE, PORT_ERR, LID_CHANGE, PKEY_CHANGE, SM_CHANGE, SRQ_ERR, SRQ_LIMIT_REACHED, QP_LAST_WQE_REACHED,
        CLIENT_REREGISTER, GID_CHANGE, WQ_FATAL
    }
}
