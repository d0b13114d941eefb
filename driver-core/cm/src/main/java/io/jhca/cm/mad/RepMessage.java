package io.jhca.cm.mad;

import static io.jhca.cm.mad.CmMessages.Rep.*;

/** The fields of a REP (IBTA 12.6.8); no EE context, no failover. */
public record RepMessage(int localCommId, int remoteCommId, int localQkey, int localQpn, int startingPsn,
        int responderResources, int initiatorDepth, int targetAckDelay, int failoverAccepted, boolean endToEndFlowControl,
        int rnrRetryCount, boolean srq, long localCaGuid, byte[] privateData) {

    public Mad encode(long tid) {
        Mad m = Mad.cm(CmMessages.REP, tid);
        m.set(CmMessages.LOCAL_COMM_ID, localCommId & 0xFFFFFFFFL)
                .set(CmMessages.REMOTE_COMM_ID, remoteCommId & 0xFFFFFFFFL).set(LOCAL_Q_KEY, localQkey & 0xFFFFFFFFL)
                .set(LOCAL_QPN, localQpn).set(STARTING_PSN, startingPsn).set(RESPONDER_RESOURCES, responderResources)
                .set(INITIATOR_DEPTH, initiatorDepth).set(TARGET_ACK_DELAY, targetAckDelay)
                .set(FAILOVER_ACCEPTED, failoverAccepted).set(END_TO_END_FLOW_CONTROL, endToEndFlowControl ? 1 : 0)
                .set(RNR_RETRY_COUNT, rnrRetryCount).set(SRQ, srq ? 1 : 0).set(LOCAL_CA_GUID, localCaGuid)
                .putBytes(PRIVATE_DATA, PRIVATE_DATA_SIZE, privateData, "REP private data");
        return m;
    }

    public static RepMessage decode(Mad m) {
        return new RepMessage(m.getInt(CmMessages.LOCAL_COMM_ID), m.getInt(CmMessages.REMOTE_COMM_ID),
                m.getInt(LOCAL_Q_KEY), m.getInt(LOCAL_QPN), m.getInt(STARTING_PSN), m.getInt(RESPONDER_RESOURCES),
                m.getInt(INITIATOR_DEPTH), m.getInt(TARGET_ACK_DELAY), m.getInt(FAILOVER_ACCEPTED),
                m.get(END_TO_END_FLOW_CONTROL) != 0, m.getInt(RNR_RETRY_COUNT), m.get(SRQ) != 0,
                m.get(LOCAL_CA_GUID), m.getBytes(PRIVATE_DATA, PRIVATE_DATA_SIZE));
    }
}
