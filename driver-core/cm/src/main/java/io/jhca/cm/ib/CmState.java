package io.jhca.cm.ib;

/** Communication states of a connection (IBTA 12.9.6, Figure 140; the names of Linux's enum ib_cm_state). */
public enum CmState {
    IDLE, REQ_SENT, REQ_RCVD, MRA_REQ_SENT, MRA_REQ_RCVD, REP_SENT, REP_RCVD, ESTABLISHED, DREQ_SENT, DREQ_RCVD,
    TIMEWAIT
}
