package io.jhca.verbs;

/**
 * An asynchronous event ({@code struct ibv_async_event}): something went wrong, or changed, outside any one work
 * request. An affiliated event names its QP, CQ or SRQ in {@link #element()}; a port event its port; a device
 * event neither. Events taken with {@link AsyncEventChannel#getEvent(long)} are acknowledged with
 * {@link AsyncEventChannel#ackEvent(AsyncEvent)}.
 *
 * @param type     the event type
 * @param resource the resource it concerns ("CQ 2", "QP 0x000011", "port 1")
 * @param detail   a sentence saying what happened
 * @param element  the QP, CQ or SRQ of an affiliated event; null for port and device events
 * @param port     the port (1-based) of a port event; 0 otherwise
 */
public record AsyncEvent(Type type, String resource, String detail, VerbsResource element, int port) {

    /** An event that names no element or port (a device event, or one a provider names only in words). */
    public AsyncEvent(Type type, String resource, String detail) {
        this(type, resource, detail, null, 0);
    }

    /** An event affiliated with {@code element} (a QP, CQ or SRQ): acknowledging it is that element's business. */
    public static AsyncEvent of(Type type, VerbsResource element, String detail) {
        return new AsyncEvent(type, element.describe(), detail, element, 0);
    }

    /** A port event ({@link Type#PORT_ACTIVE}, {@link Type#PORT_ERR}, ...) on {@code port} (1-based). */
    public static AsyncEvent ofPort(Type type, int port, String detail) {
        return new AsyncEvent(type, "port " + port, detail, null, port);
    }

    /** The QP of a QP event ({@code element.qp}), else null. */
    public QueuePair qp() {
        return element instanceof QueuePair q ? q : null;
    }

    /** The CQ of a CQ event ({@code element.cq}), else null. */
    public CompletionQueue cq() {
        return element instanceof CompletionQueue c ? c : null;
    }

    /** Event types with the names of {@code enum ibv_event_type}. */
    public enum Type {
        CQ_ERR, QP_FATAL, QP_REQ_ERR, QP_ACCESS_ERR, COMM_EST, SQ_DRAINED, PATH_MIG, PATH_MIG_ERR, DEVICE_FATAL,
        PORT_ACTIVE, PORT_ERR, LID_CHANGE, PKEY_CHANGE, SM_CHANGE, SRQ_ERR, SRQ_LIMIT_REACHED, QP_LAST_WQE_REACHED,
        CLIENT_REREGISTER, GID_CHANGE, WQ_FATAL
    }
}
