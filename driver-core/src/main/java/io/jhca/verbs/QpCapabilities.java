package io.jhca.verbs;

/**
 * Queue sizes of a QP ({@code struct ibv_qp_cap}). Asked for at creation; the QP reports what it got
 * (providers may round up, never down).
 */
public record QpCapabilities(int maxSendWr, int maxRecvWr, int maxSendSge, int maxRecvSge, int maxInlineData) {

    public QpCapabilities {
        if (maxSendWr < 0 || maxRecvWr < 0 || maxSendSge < 0 || maxRecvSge < 0 || maxInlineData < 0) {
            throw new VerbsException(VerbsException.EINVAL, "QP capabilities must not be negative: " + this);
        }
    }

    /** Refuses capabilities above the device's limits, naming the first one exceeded. */
    void checkAgainst(DeviceAttributes dev) {
        check("max_send_wr", maxSendWr, dev.maxQpWr());
        check("max_recv_wr", maxRecvWr, dev.maxQpWr());
        check("max_send_sge", maxSendSge, dev.maxSge());
        check("max_recv_sge", maxRecvSge, dev.maxSge());
        check("max_inline_data", maxInlineData, dev.maxInlineData());
    }

    private static void check(String name, int asked, int limit) {
        if (asked > limit) {
            throw new VerbsException(VerbsException.EINVAL,
                    "create QP: " + name + " " + asked + " exceeds the device limit " + limit);
        }
    }
}
