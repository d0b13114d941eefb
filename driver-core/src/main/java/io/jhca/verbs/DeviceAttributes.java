package io.jhca.verbs;

/**
 * What {@code ibv_query_device} reports (the fields ibv_devinfo -v prints), plus the inline limit.
 * Limits are enforced by driver-core for every provider: QP and CQ creation, registration and modify check them.
 */
public record DeviceAttributes(
        String fwVer,
        long nodeGuid,
        long sysImageGuid,
        long maxMrSize,
        long pageSizeCap,
        int vendorId,
        int vendorPartId,
        int hwVer,
        String boardId,
        int maxQp,
        int maxQpWr,
        long deviceCapFlags,
        int maxSge,
        int maxSgeRd,
        int maxCq,
        int maxCqe,
        int maxMr,
        int maxPd,
        int maxQpRdAtom,
        int maxQpInitRdAtom,
        int maxResRdAtom,
        int atomicCap,
        int maxAh,
        int maxPkeys,
        int localCaAckDelay,
        int physPortCnt,
        int maxInlineData,
        int maxMcastGrp,
        int maxMcastQpAttach,
        int maxTotalMcastQpAttach) {

    /** A device without multicast: max_mcast_grp, max_mcast_qp_attach and max_total_mcast_qp_attach are 0. */
    public DeviceAttributes(String fwVer, long nodeGuid, long sysImageGuid, long maxMrSize, long pageSizeCap,
            int vendorId, int vendorPartId, int hwVer, String boardId, int maxQp, int maxQpWr, long deviceCapFlags,
            int maxSge, int maxSgeRd, int maxCq, int maxCqe, int maxMr, int maxPd, int maxQpRdAtom,
            int maxQpInitRdAtom, int maxResRdAtom, int atomicCap, int maxAh, int maxPkeys, int localCaAckDelay,
            int physPortCnt, int maxInlineData) {
        this(fwVer, nodeGuid, sysImageGuid, maxMrSize, pageSizeCap, vendorId, vendorPartId, hwVer, boardId, maxQp,
                maxQpWr, deviceCapFlags, maxSge, maxSgeRd, maxCq, maxCqe, maxMr, maxPd, maxQpRdAtom, maxQpInitRdAtom,
                maxResRdAtom, atomicCap, maxAh, maxPkeys, localCaAckDelay, physPortCnt, maxInlineData, 0, 0, 0);
    }

    /** The same attributes with the multicast limits set. */
    public DeviceAttributes withMulticast(int maxGroups, int maxQpAttach, int maxTotalQpAttach) {
        return new DeviceAttributes(fwVer, nodeGuid, sysImageGuid, maxMrSize, pageSizeCap, vendorId, vendorPartId,
                hwVer, boardId, maxQp, maxQpWr, deviceCapFlags, maxSge, maxSgeRd, maxCq, maxCqe, maxMr, maxPd,
                maxQpRdAtom, maxQpInitRdAtom, maxResRdAtom, atomicCap, maxAh, maxPkeys, localCaAckDelay, physPortCnt,
                maxInlineData, maxGroups, maxQpAttach, maxTotalQpAttach);
    }

    /** {@code IBV_ATOMIC_HCA}: atomics are atomic with respect to this HCA's other operations. */
    public static final int ATOMIC_HCA = 1;
}
