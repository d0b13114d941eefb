package io.jhca.cm.mad;

/** REJ reasons (IBTA 12.6.7.2 Table 109; Linux enum ib_cm_rej_reason). */
public enum RejectReason {
    NO_QP(1), NO_EEC(2), NO_RESOURCES(3), TIMEOUT(4), UNSUPPORTED(5), INVALID_COMM_ID(6), INVALID_COMM_INSTANCE(7),
    INVALID_SERVICE_ID(8), INVALID_TRANSPORT_TYPE(9), STALE_CONN(10), RDC_NOT_EXIST(11), INVALID_GID(12),
    INVALID_LID(13), INVALID_SL(14), INVALID_TRAFFIC_CLASS(15), INVALID_HOP_LIMIT(16), INVALID_PACKET_RATE(17),
    INVALID_ALT_GID(18), INVALID_ALT_LID(19), INVALID_ALT_SL(20), INVALID_ALT_TRAFFIC_CLASS(21),
    INVALID_ALT_HOP_LIMIT(22), INVALID_ALT_PACKET_RATE(23), PORT_CM_REDIRECT(24), PORT_REDIRECT(25),
    INVALID_MTU(26), INSUFFICIENT_RESP_RESOURCES(27), CONSUMER_DEFINED(28), INVALID_RNR_RETRY(29),
    DUPLICATE_LOCAL_COMM_ID(30), INVALID_CLASS_VERSION(31), INVALID_FLOW_LABEL(32), INVALID_ALT_FLOW_LABEL(33),
    VENDOR_OPTION_NOT_SUPPORTED(35);

    private final int code;

    RejectReason(int code) {
        this.code = code;
    }

    public int code() {
        return code;
    }

    /** The reason of a code, or null for a code IBTA does not define. */
    public static RejectReason of(int code) {
        for (RejectReason r : values()) {
            if (r.code == code) {
                return r;
            }
        }
        return null;
    }
}
