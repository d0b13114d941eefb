package io.jhca.cm.mad;

/** Encoders for the short CM messages: MRA, REJ, RTU, DREQ, DREP (IBTA 12.6.6, 12.6.7, 12.6.9-12.6.11). */
public final class ShortMessages {
    private ShortMessages() {
    }

    private static Mad ids(int attr, long tid, int localCommId, int remoteCommId) {
        return Mad.cm(attr, tid).set(CmMessages.LOCAL_COMM_ID, localCommId & 0xFFFFFFFFL)
                .set(CmMessages.REMOTE_COMM_ID, remoteCommId & 0xFFFFFFFFL);
    }

    /** MRA for message {@code mraed} ({@link CmMessages#MSG_REQ}, ...) asking for {@code serviceTimeout} more. */
    public static Mad mra(long tid, int localCommId, int remoteCommId, int mraed, int serviceTimeout, byte[] pd) {
        return ids(CmMessages.MRA, tid, localCommId, remoteCommId).set(CmMessages.Mra.MESSAGE_MRAED, mraed)
                .set(CmMessages.Mra.SERVICE_TIMEOUT, serviceTimeout)
                .putBytes(CmMessages.Mra.PRIVATE_DATA, CmMessages.Mra.PRIVATE_DATA_SIZE, pd, "MRA private data");
    }

    /** REJ of message {@code rejected} for {@code reason}, with optional additional rejection information. */
    public static Mad rej(long tid, int localCommId, int remoteCommId, int rejected, RejectReason reason, byte[] ari,
            byte[] pd) {
        return ids(CmMessages.REJ, tid, localCommId, remoteCommId).set(CmMessages.Rej.MESSAGE_REJECTED, rejected)
                .set(CmMessages.Rej.REJECTED_INFO_LENGTH, ari.length).set(CmMessages.Rej.REASON, reason.code())
                .putBytes(CmMessages.Rej.ARI, CmMessages.Rej.ARI_SIZE, ari, "REJ additional rejection information")
                .putBytes(CmMessages.Rej.PRIVATE_DATA, CmMessages.Rej.PRIVATE_DATA_SIZE, pd, "REJ private data");
    }

    public static Mad rtu(long tid, int localCommId, int remoteCommId, byte[] pd) {
        return ids(CmMessages.RTU, tid, localCommId, remoteCommId)
                .putBytes(CmMessages.Rtu.PRIVATE_DATA, CmMessages.Rtu.PRIVATE_DATA_SIZE, pd, "RTU private data");
    }

    /** DREQ naming the receiver's QP ({@code remoteQpn}: the receiver checks it is its own). */
    public static Mad dreq(long tid, int localCommId, int remoteCommId, int remoteQpn, byte[] pd) {
        return ids(CmMessages.DREQ, tid, localCommId, remoteCommId).set(CmMessages.Dreq.REMOTE_QPN, remoteQpn)
                .putBytes(CmMessages.Dreq.PRIVATE_DATA, CmMessages.Dreq.PRIVATE_DATA_SIZE, pd, "DREQ private data");
    }

    public static Mad drep(long tid, int localCommId, int remoteCommId, byte[] pd) {
        return ids(CmMessages.DREP, tid, localCommId, remoteCommId)
                .putBytes(CmMessages.Drep.PRIVATE_DATA, CmMessages.Drep.PRIVATE_DATA_SIZE, pd, "DREP private data");
    }

    public static byte[] privateData(Mad m) {
        return m.getBytes(CmMessages.privateDataOffset(m.attributeId()), CmMessages.privateDataSize(m.attributeId()));
    }
}
