package io.jhca.cm.mad;

import static io.jhca.cm.mad.CmMessages.Req.*;

/**
 * The fields of a REQ this connection manager sets or reads (IBTA 12.6.5); EE contexts and the alternate path are
 * zero (RC and UC only, no automatic path migration). GIDs are 16 bytes in wire order.
 */
public record ReqMessage(int localCommId, long serviceId, long localCaGuid, int localQpn, int responderResources,
        int initiatorDepth, int remoteCmResponseTimeout, int transportServiceType, int startingPsn,
        int localCmResponseTimeout, int retryCount, int partitionKey, int pathMtu, int rnrRetryCount,
        int maxCmRetries, boolean srq, int primaryLocalLid, int primaryRemoteLid, byte[] primaryLocalGid,
        byte[] primaryRemoteGid, int flowLabel, int packetRate, int trafficClass, int hopLimit, int sl,
        boolean subnetLocal, int localAckTimeout, byte[] privateData) {

    public Mad encode(long tid) {
        Mad m = Mad.cm(CmMessages.REQ, tid);
        m.set(LOCAL_COMM_ID, localCommId & 0xFFFFFFFFL).set(SERVICE_ID, serviceId).set(LOCAL_CA_GUID, localCaGuid)
                .set(LOCAL_QPN, localQpn).set(RESPONDER_RESOURCES, responderResources)
                .set(INITIATOR_DEPTH, initiatorDepth).set(REMOTE_CM_RESPONSE_TIMEOUT, remoteCmResponseTimeout)
                .set(TRANSPORT_SERVICE_TYPE, transportServiceType).set(STARTING_PSN, startingPsn)
                .set(LOCAL_CM_RESPONSE_TIMEOUT, localCmResponseTimeout).set(RETRY_COUNT, retryCount)
                .set(PARTITION_KEY, partitionKey).set(PATH_MTU, pathMtu).set(RNR_RETRY_COUNT, rnrRetryCount)
                .set(MAX_CM_RETRIES, maxCmRetries).set(SRQ, srq ? 1 : 0).set(PRIMARY_LOCAL_LID, primaryLocalLid)
                .set(PRIMARY_REMOTE_LID, primaryRemoteLid)
                .putBytes(PRIMARY_LOCAL_GID, 16, primaryLocalGid, "PrimaryLocalPortGID")
                .putBytes(PRIMARY_REMOTE_GID, 16, primaryRemoteGid, "PrimaryRemotePortGID")
                .set(PRIMARY_FLOW_LABEL, flowLabel).set(PRIMARY_PACKET_RATE, packetRate)
                .set(PRIMARY_TRAFFIC_CLASS, trafficClass).set(PRIMARY_HOP_LIMIT, hopLimit).set(PRIMARY_SL, sl)
                .set(PRIMARY_SUBNET_LOCAL, subnetLocal ? 1 : 0).set(PRIMARY_LOCAL_ACK_TIMEOUT, localAckTimeout)
                .putBytes(PRIVATE_DATA, PRIVATE_DATA_SIZE, privateData, "REQ private data");
        return m;
    }

    public static ReqMessage decode(Mad m) {
        return new ReqMessage(m.getInt(LOCAL_COMM_ID), m.get(SERVICE_ID), m.get(LOCAL_CA_GUID), m.getInt(LOCAL_QPN),
                m.getInt(RESPONDER_RESOURCES), m.getInt(INITIATOR_DEPTH), m.getInt(REMOTE_CM_RESPONSE_TIMEOUT),
                m.getInt(TRANSPORT_SERVICE_TYPE), m.getInt(STARTING_PSN), m.getInt(LOCAL_CM_RESPONSE_TIMEOUT),
                m.getInt(RETRY_COUNT), m.getInt(PARTITION_KEY), m.getInt(PATH_MTU), m.getInt(RNR_RETRY_COUNT),
                m.getInt(MAX_CM_RETRIES), m.get(SRQ) != 0, m.getInt(PRIMARY_LOCAL_LID), m.getInt(PRIMARY_REMOTE_LID),
                m.getBytes(PRIMARY_LOCAL_GID, 16), m.getBytes(PRIMARY_REMOTE_GID, 16), m.getInt(PRIMARY_FLOW_LABEL),
                m.getInt(PRIMARY_PACKET_RATE), m.getInt(PRIMARY_TRAFFIC_CLASS), m.getInt(PRIMARY_HOP_LIMIT),
                m.getInt(PRIMARY_SL), m.get(PRIMARY_SUBNET_LOCAL) != 0, m.getInt(PRIMARY_LOCAL_ACK_TIMEOUT),
                m.getBytes(PRIVATE_DATA, PRIVATE_DATA_SIZE));
    }
}
