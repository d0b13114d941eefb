package io.jhca.mlx5.ring;

import io.jhca.verbs.WcStatus;

/** A QP as the CQ poller sees it: its rings, and what happens to it when one of its WRs completes in error. */
public interface CqeOwner {

    int qpn();

    /** The send ring, or null if the QP has none. */
    SqBuffer sendRing();

    /** The receive ring, or null if the QP has none. */
    RqBuffer recvRing();

    /** The shared receive queue's ring when the QP takes its receives from an SRQ, else null. */
    default SrqBuffer srqRing() {
        return null;
    }

    /** UD QPs report the sender's QPN and P_Key index on receive. */
    boolean isUd();

    /**
     * An error completion arrived for this QP ({@code requester}: from the send queue). The device has moved the QP
     * to ERR (SQE for a UD send error); the provider mirrors that. WR_FLUSH_ERR completions come after the fact and
     * change nothing.
     */
    void onErrorCompletion(boolean requester, WcStatus status);
}
