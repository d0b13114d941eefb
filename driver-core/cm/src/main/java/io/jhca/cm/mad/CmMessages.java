package io.jhca.cm.mad;

/**
 * The CM messages' attribute IDs (IBTA 12.6.2 Table 104) and their fields (IBTA 12.6.5-12.6.11, Tables 106-113;
 * byte and bit positions as in Linux include/rdma/ibta_vol1_c12.h). Offsets count from the start of the message
 * data, after the MAD header.
 */
public final class CmMessages {
    private CmMessages() {
    }

    public static final int REQ = 0x0010;
    public static final int MRA = 0x0011;
    public static final int REJ = 0x0012;
    public static final int REP = 0x0013;
    public static final int RTU = 0x0014;
    public static final int DREQ = 0x0015;
    public static final int DREP = 0x0016;

    /** The "message MRAed/rejected" codes of MRA and REJ (IBTA 12.6.6, 12.6.7). */
    public static final int MSG_REQ = 0;
    public static final int MSG_REP = 1;
    public static final int MSG_OTHER = 2;

    /** Transport service types of the REQ (IBTA 12.6.5). */
    public static final int TRANSPORT_RC = 0;
    public static final int TRANSPORT_UC = 1;

    public static String name(int attributeId) {
        switch (attributeId) {
            case REQ: return "REQ";
            case MRA: return "MRA";
            case REJ: return "REJ";
            case REP: return "REP";
            case RTU: return "RTU";
            case DREQ: return "DREQ";
            case DREP: return "DREP";
            default: return "attribute 0x" + Integer.toHexString(attributeId);
        }
    }

    /** Both communication IDs lead every message but the REQ (which has only the local one). */
    public static final MadField LOCAL_COMM_ID = MadField.of("LocalCommunicationID", 0, 32);
    public static final MadField REMOTE_COMM_ID = MadField.of("RemoteCommunicationID", 4, 32);

    /** REQ, IBTA Table 106. */
    public static final class Req {
        private Req() {
        }

        public static final MadField LOCAL_COMM_ID = CmMessages.LOCAL_COMM_ID;
        public static final MadField SERVICE_ID = MadField.of("ServiceID", 8, 64);
        public static final MadField LOCAL_CA_GUID = MadField.of("LocalCAGUID", 16, 64);
        public static final MadField LOCAL_Q_KEY = MadField.of("LocalQ_Key", 28, 32);
        public static final MadField LOCAL_QPN = MadField.of("LocalQPN", 32, 24);
        public static final MadField RESPONDER_RESOURCES = MadField.of("ResponderResources", 35, 8);
        public static final MadField LOCAL_EECN = MadField.of("LocalEECN", 36, 24);
        public static final MadField INITIATOR_DEPTH = MadField.of("InitiatorDepth", 39, 8);
        public static final MadField REMOTE_EECN = MadField.of("RemoteEECN", 40, 24);
        public static final MadField REMOTE_CM_RESPONSE_TIMEOUT = MadField.of("RemoteCMResponseTimeout", 43, 5);
        public static final MadField TRANSPORT_SERVICE_TYPE = MadField.of("TransportServiceType", 43, 5, 2);
        public static final MadField END_TO_END_FLOW_CONTROL = MadField.of("EndToEndFlowControl", 43, 7, 1);
        public static final MadField STARTING_PSN = MadField.of("StartingPSN", 44, 24);
        public static final MadField LOCAL_CM_RESPONSE_TIMEOUT = MadField.of("LocalCMResponseTimeout", 47, 5);
        public static final MadField RETRY_COUNT = MadField.of("RetryCount", 47, 5, 3);
        public static final MadField PARTITION_KEY = MadField.of("PartitionKey", 48, 16);
        public static final MadField PATH_MTU = MadField.of("PathPacketPayloadMTU", 50, 4);
        public static final MadField RDC_EXISTS = MadField.of("RDCExists", 50, 4, 1);
        public static final MadField RNR_RETRY_COUNT = MadField.of("RNRRetryCount", 50, 5, 3);
        public static final MadField MAX_CM_RETRIES = MadField.of("MaxCMRetries", 51, 4);
        public static final MadField SRQ = MadField.of("SRQ", 51, 4, 1);
        public static final MadField EXTENDED_TRANSPORT_TYPE = MadField.of("ExtendedTransportType", 51, 5, 3);
        public static final MadField PRIMARY_LOCAL_LID = MadField.of("PrimaryLocalPortLID", 52, 16);
        public static final MadField PRIMARY_REMOTE_LID = MadField.of("PrimaryRemotePortLID", 54, 16);
        public static final int PRIMARY_LOCAL_GID = 56;
        public static final int PRIMARY_REMOTE_GID = 72;
        public static final MadField PRIMARY_FLOW_LABEL = MadField.of("PrimaryFlowLabel", 88, 20);
        public static final MadField PRIMARY_PACKET_RATE = MadField.of("PrimaryPacketRate", 91, 2, 6);
        public static final MadField PRIMARY_TRAFFIC_CLASS = MadField.of("PrimaryTrafficClass", 92, 8);
        public static final MadField PRIMARY_HOP_LIMIT = MadField.of("PrimaryHopLimit", 93, 8);
        public static final MadField PRIMARY_SL = MadField.of("PrimarySL", 94, 4);
        public static final MadField PRIMARY_SUBNET_LOCAL = MadField.of("PrimarySubnetLocal", 94, 4, 1);
        public static final MadField PRIMARY_LOCAL_ACK_TIMEOUT = MadField.of("PrimaryLocalACKTimeout", 95, 5);
        public static final int PRIVATE_DATA = 140;
        public static final int PRIVATE_DATA_SIZE = 92;
    }

    /** MRA, IBTA Table 107. */
    public static final class Mra {
        private Mra() {
        }

        public static final MadField MESSAGE_MRAED = MadField.of("MessageMRAed", 8, 2);
        public static final MadField SERVICE_TIMEOUT = MadField.of("ServiceTimeout", 9, 5);
        public static final int PRIVATE_DATA = 10;
        public static final int PRIVATE_DATA_SIZE = 222;
    }

    /** REJ, IBTA Table 108. */
    public static final class Rej {
        private Rej() {
        }

        public static final MadField MESSAGE_REJECTED = MadField.of("MessageRejected", 8, 2);
        public static final MadField REJECTED_INFO_LENGTH = MadField.of("RejectedInfoLength", 9, 7);
        public static final MadField REASON = MadField.of("Reason", 10, 16);
        public static final int ARI = 12;
        public static final int ARI_SIZE = 72;
        public static final int PRIVATE_DATA = 84;
        public static final int PRIVATE_DATA_SIZE = 148;
    }

    /** REP, IBTA Table 110. */
    public static final class Rep {
        private Rep() {
        }

        public static final MadField LOCAL_Q_KEY = MadField.of("LocalQ_Key", 8, 32);
        public static final MadField LOCAL_QPN = MadField.of("LocalQPN", 12, 24);
        public static final MadField LOCAL_EECN = MadField.of("LocalEEContext", 16, 24);
        public static final MadField STARTING_PSN = MadField.of("StartingPSN", 20, 24);
        public static final MadField RESPONDER_RESOURCES = MadField.of("ResponderResources", 24, 8);
        public static final MadField INITIATOR_DEPTH = MadField.of("InitiatorDepth", 25, 8);
        public static final MadField TARGET_ACK_DELAY = MadField.of("TargetACKDelay", 26, 5);
        public static final MadField FAILOVER_ACCEPTED = MadField.of("FailoverAccepted", 26, 5, 2);
        public static final MadField END_TO_END_FLOW_CONTROL = MadField.of("EndToEndFlowControl", 26, 7, 1);
        public static final MadField RNR_RETRY_COUNT = MadField.of("RNRRetryCount", 27, 3);
        public static final MadField SRQ = MadField.of("SRQ", 27, 3, 1);
        public static final MadField LOCAL_CA_GUID = MadField.of("LocalCAGUID", 28, 64);
        public static final int PRIVATE_DATA = 36;
        public static final int PRIVATE_DATA_SIZE = 196;
    }

    /** RTU, IBTA Table 111. */
    public static final class Rtu {
        private Rtu() {
        }

        public static final int PRIVATE_DATA = 8;
        public static final int PRIVATE_DATA_SIZE = 224;
    }

    /** DREQ, IBTA Table 112. */
    public static final class Dreq {
        private Dreq() {
        }

        public static final MadField REMOTE_QPN = MadField.of("RemoteQPN/EECN", 8, 24);
        public static final int PRIVATE_DATA = 12;
        public static final int PRIVATE_DATA_SIZE = 220;
    }

    /** DREP, IBTA Table 113. */
    public static final class Drep {
        private Drep() {
        }

        public static final int PRIVATE_DATA = 8;
        public static final int PRIVATE_DATA_SIZE = 224;
    }

    /** Where a message's private data starts and how long it is. */
    public static int privateDataOffset(int attributeId) {
        switch (attributeId) {
            case REQ: return Req.PRIVATE_DATA;
            case MRA: return Mra.PRIVATE_DATA;
            case REJ: return Rej.PRIVATE_DATA;
            case REP: return Rep.PRIVATE_DATA;
            case RTU: return Rtu.PRIVATE_DATA;
            case DREQ: return Dreq.PRIVATE_DATA;
            case DREP: return Drep.PRIVATE_DATA;
            default: throw new IllegalArgumentException("not a CM message: " + name(attributeId));
        }
    }

    public static int privateDataSize(int attributeId) {
        return Mad.DATA_SIZE - privateDataOffset(attributeId);
    }
}
