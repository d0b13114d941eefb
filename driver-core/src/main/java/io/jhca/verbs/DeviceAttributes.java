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
        int maxMw,
        int maxSrq,
        int maxSrqWr,
        int maxSrqSge,
        int maxMcastGrp,
        int maxMcastQpAttach,
        int maxTotalMcastQpAttach) {

    /** The same attributes with the multicast limits set. */
    public DeviceAttributes withMulticast(int maxGroups, int maxQpAttach, int maxTotalQpAttach) {
        return new DeviceAttributes(fwVer, nodeGuid, sysImageGuid, maxMrSize, pageSizeCap, vendorId, vendorPartId,
                hwVer, boardId, maxQp, maxQpWr, deviceCapFlags, maxSge, maxSgeRd, maxCq, maxCqe, maxMr, maxPd,
                maxQpRdAtom, maxQpInitRdAtom, maxResRdAtom, atomicCap, maxAh, maxPkeys, localCaAckDelay, physPortCnt,
                maxInlineData, maxMw, maxSrq, maxSrqWr, maxSrqSge, maxGroups, maxQpAttach, maxTotalQpAttach);
    }

    /** {@code IBV_ATOMIC_HCA}: atomics are atomic with respect to this HCA's other operations. */
    public static final int ATOMIC_HCA = 1;

    /** {@code IBV_DEVICE_MEM_WINDOW}: memory windows (type 1). */
    public static final long CAP_MEM_WINDOW = 1L << 17;
    /** {@code IBV_DEVICE_MEM_WINDOW_TYPE_2A}: type 2 windows, bound to a QP. */
    public static final long CAP_MEM_WINDOW_TYPE_2A = 1L << 23;
    /** {@code IBV_DEVICE_MEM_WINDOW_TYPE_2B}: type 2 windows, bound to a QP and invalidated with it. */
    public static final long CAP_MEM_WINDOW_TYPE_2B = 1L << 24;

    /** A device without memory windows, shared receive queues and multicast (max_mw, max_srq, max_mcast_grp 0). */
    public DeviceAttributes(String fwVer, long nodeGuid, long sysImageGuid, long maxMrSize, long pageSizeCap,
            int vendorId, int vendorPartId, int hwVer, String boardId, int maxQp, int maxQpWr, long deviceCapFlags,
            int maxSge, int maxSgeRd, int maxCq, int maxCqe, int maxMr, int maxPd, int maxQpRdAtom,
            int maxQpInitRdAtom, int maxResRdAtom, int atomicCap, int maxAh, int maxPkeys, int localCaAckDelay,
            int physPortCnt, int maxInlineData) {
        this(fwVer, nodeGuid, sysImageGuid, maxMrSize, pageSizeCap, vendorId, vendorPartId, hwVer, boardId, maxQp,
                maxQpWr, deviceCapFlags, maxSge, maxSgeRd, maxCq, maxCqe, maxMr, maxPd, maxQpRdAtom, maxQpInitRdAtom,
                maxResRdAtom, atomicCap, maxAh, maxPkeys, localCaAckDelay, physPortCnt, maxInlineData, 0, 0, 0, 0, 0, 0, 0);
    }

    /** True if the device offers windows of {@code type} (device_cap_flags). */
    public boolean supports(MwType type) {
        return type == MwType.TYPE_1 ? (deviceCapFlags & CAP_MEM_WINDOW) != 0
                : (deviceCapFlags & (CAP_MEM_WINDOW_TYPE_2A | CAP_MEM_WINDOW_TYPE_2B)) != 0;
    }
}
